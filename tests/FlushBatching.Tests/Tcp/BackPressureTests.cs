using System.Buffers;
using FlushBatching.Diagnostics;
using FlushBatching.Tcp;
using FlushBatching.Tests.Support;

namespace FlushBatching.Tests.Tcp;

public class BackPressureTests
{
    [Fact]
    public async Task A_reader_that_stops_turns_writes_away_with_bounded_memory_until_it_reads_again()
    {
        // The gap between the marks is wider than everything past the queue can absorb while the reader is stopped (the
        // receiver's pipe stops reading at 1 MB, the two sockets hold a few hundred KB): once refused, the queue cannot
        // drain below the low mark, however far the send loop gets, so no waiting decides what is asserted.
        const long high = 4 * 1024 * 1024;
        const long low = 2 * 1024 * 1024;
        using var metrics = new FlushBatchingMetrics();
        using var recorder = new MeterRecorder(metrics);
        var settings = ConnectionSettings.Default.WithSendBufferSize(64 * 1024).WithReceiveBufferSize(64 * 1024).WithWriteBufferWaterMarks(high, low).WithMetrics(metrics);
        await using var loopback = Loopback.Listen(settings);
        var (client, server) = await loopback.ConnectAsync(settings);
        using var gate = new ManualResetEventSlim(false);
        var reader = new GatedReader(gate);
        server.Start(reader);

        var payload = new byte[16 * 1024];
        var accepted = 0;
        while (client.TryWrite(payload))
        {
            accepted++;
            Assert.True(client.UnsentBytes <= high + payload.Length + 4, $"{client.UnsentBytes} bytes unsent, above the high-water mark and one frame");
            Assert.True(accepted < 10_000, "160 MB were taken by a connection whose reader has stopped.");
        }

        Assert.False(client.TryWrite(payload), "a write was taken again while the reader is still stopped");
        Assert.False(client.IsWritable);
        Assert.Equal(2, recorder.Sum("flushbatching.writes.refused"));
        Assert.True(client.UnsentBytes > low, $"{client.UnsentBytes} bytes unsent while refusing writes; the low-water mark is {low}");
        var whenWritable = client.WhenWritableAsync();
        Assert.False(whenWritable.IsCompleted);

        gate.Set();
        await Poll.Within(whenWritable);
        Assert.True(client.UnsentBytes <= low);
        Assert.True(client.TryWrite(payload));
        accepted++;
        await reader.WaitForCountAsync(accepted);
    }

    [Fact]
    public async Task Above_the_mark_a_refused_write_is_not_closing_and_once_closing_every_write_is_refused_for_good()
    {
        // What a back-pressure loop needs to tell the two refusals apart: WhenWritableAsync completes at once when
        // closing, so a loop that only awaited it would spin.
        var settings = ConnectionSettings.Default.WithSendBufferSize(64 * 1024).WithReceiveBufferSize(64 * 1024).WithWriteBufferWaterMarks(256 * 1024, 128 * 1024);
        await using var loopback = Loopback.Listen(settings);
        var (client, server) = await loopback.ConnectAsync(settings);
        using var gate = new ManualResetEventSlim(false);
        server.Start(new GatedReader(gate));
        var payload = new byte[16 * 1024];
        while (client.TryWrite(payload))
        {
        }

        Assert.False(client.IsClosing);
        Assert.False(client.WhenWritableAsync().IsCompleted);

        var closed = client.CloseAsync();
        Assert.True(client.IsClosing);
        Assert.False(client.TryWrite(payload));
        Assert.True(client.WhenWritableAsync().IsCompleted);
        gate.Set();
        await Poll.Within(closed);
        Assert.True(client.IsClosing);
    }

    private sealed class GatedReader(ManualResetEventSlim gate) : IFrameHandler
    {
        private readonly FrameCollector _inner = new();

        public Task WaitForCountAsync(int count) => _inner.WaitForCountAsync(count);

        public void OnFrame(FramedConnection connection, ReadOnlySequence<byte> payload)
        {
            gate.Wait(Poll.Patience);
            _inner.OnFrame(connection, payload);
        }

        public void OnClosed(FramedConnection connection, Exception? reason) => _inner.OnClosed(connection, reason);
    }
}
