using System.Buffers.Binary;
using FlushBatching.Batching;
using FlushBatching.Diagnostics;
using FlushBatching.Tcp;
using FlushBatching.Tests.Support;
using Microsoft.Extensions.Time.Testing;
using Xunit.Abstractions;

namespace FlushBatching.Tests.Tcp;

/// <summary>
/// Random sequences of writes from several producers, drains, clock moves and a final close, on fixed seeds,
/// over a real connection. A failing seed is a test case: add it to the list.
/// </summary>
public class RandomizedSequenceTests(ITestOutputHelper output)
{
    private const int Producers = 4;

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(42)]
    [InlineData(20261122)]
    public async Task Nothing_is_lost_reordered_or_held_past_a_drain(int seed)
    {
        var random = new Random(seed);
        var batching = BatchingSettings.Default
            .WithMaxPendingWrites(random.Next(1, 50))
            .WithMaxPendingBytes(random.Next(64, 8192))
            .WithFlushInterval(TimeSpan.FromMilliseconds(random.Next(1, 50)));
        output.WriteLine($"seed {seed}: {batching}");

        using var metrics = new FlushBatchingMetrics();
        using var recorder = new MeterRecorder(metrics);
        var scheduler = new ManualScheduler();
        var clock = new FakeTimeProvider();
        var pool = new LeakCheckingPool();
        await using var loopback = Loopback.Listen();
        var settings = ConnectionSettings.Default.WithBatching(batching).WithSendScheduler(scheduler)
            .WithTimeProvider(clock).WithBufferPool(pool).WithMetrics(metrics);
        var (client, server) = await loopback.ConnectAsync(settings);
        var received = new FrameCollector();
        server.Start(received);

        var written = new List<byte[]>();
        var next = new int[Producers];
        var largestFrame = 0;
        for (var step = 0; step < 300; step++)
        {
            switch (random.Next(4))
            {
                case 0 or 1:
                    var producer = random.Next(Producers);
                    for (var k = random.Next(1, 30); k > 0; k--)
                    {
                        var frame = new byte[random.Next(5, 300)];
                        random.NextBytes(frame);
                        frame[0] = (byte)producer;
                        BinaryPrimitives.WriteInt32LittleEndian(frame.AsSpan(1), next[producer]++);
                        Assert.True(client.TryWrite(frame));
                        written.Add(frame);
                        largestFrame = Math.Max(largestFrame, frame.Length + 4);
                    }

                    break;
                case 2:
                    clock.AutoAdvanceAmount = TimeSpan.FromMilliseconds(random.Next(0, 5));
                    scheduler.RunAll();
                    await received.WaitForCountAsync(written.Count);

                    // Every frame written went out in this drain: none is held for a later flush.
                    Assert.Equal(written.Count, recorder.Sum("flushbatching.frames.sent"));
                    break;
                default:
                    clock.Advance(TimeSpan.FromMilliseconds(random.Next(0, 100)));
                    break;
            }
        }

        var closing = client.CloseAsync();
        scheduler.RunAll();
        await Poll.Within(closing);
        Assert.Null(await received.WaitClosedAsync());

        // The frames arrived as written: in one order, which keeps each producer's order, byte for byte.
        Assert.Equal(written, received.Frames);
        Assert.All(recorder.Values("flushbatching.frames_per_send"), frames => Assert.InRange(frames, 1, batching.MaxPendingWrites));
        Assert.All(recorder.Values("flushbatching.bytes_per_send"), bytes => Assert.InRange(bytes, 1, batching.MaxPendingBytes + largestFrame - 1));
        Assert.Equal(written.Count, recorder.Sum("flushbatching.frames.sent"));
        Assert.Equal(recorder.Values("flushbatching.frames_per_send").Count(), recorder.Sum("flushbatching.flushes"));
        pool.AssertAllReturned();
        output.WriteLine($"{written.Count} frames in {recorder.Sum("flushbatching.flushes")} sends; by count {recorder.Sum("flushbatching.flushes", "count")}, " +
            $"bytes {recorder.Sum("flushbatching.flushes", "bytes")}, interval {recorder.Sum("flushbatching.flushes", "interval")}, burst end {recorder.Sum("flushbatching.flushes", "burst-end")}");
        Assert.True(recorder.Sum("flushbatching.flushes", "burst-end") > 0);
    }
}
