using FlushBatching.Batching;
using FlushBatching.Diagnostics;
using FlushBatching.Tcp;
using FlushBatching.Tests.Support;

namespace FlushBatching.Tests.Tcp;

public class MetricsTests
{
    [Fact]
    public async Task The_flushbatching_meter_counts_frames_bytes_sends_and_flushes_by_reason()
    {
        using var metrics = new FlushBatchingMetrics();
        using var recorder = new MeterRecorder(metrics);
        var scheduler = new ManualScheduler();
        await using var loopback = Loopback.Listen(ConnectionSettings.Default.WithMetrics(metrics));
        var settings = ConnectionSettings.Default.WithMetrics(metrics).WithSendScheduler(scheduler).WithBatching(BatchingSettings.Default.WithMaxPendingWrites(10));
        var (client, server) = await loopback.ConnectAsync(settings);
        var received = new FrameCollector();
        server.Start(received);
        for (var i = 0; i < 95; i++)
        {
            client.TryWrite(new byte[6]);
        }

        scheduler.RunAll();
        await received.WaitForCountAsync(95);

        Assert.Equal("FlushBatching", metrics.Meter.Name);
        Assert.Equal(95, recorder.Sum("flushbatching.frames.sent"));
        Assert.Equal(95 * 10, recorder.Sum("flushbatching.bytes.sent"));
        Assert.Equal(10, recorder.Sum("flushbatching.flushes"));
        Assert.Equal(9, recorder.Sum("flushbatching.flushes", "count"));
        Assert.Equal(1, recorder.Sum("flushbatching.flushes", "burst-end"));
        Assert.Equal([10, 10, 10, 10, 10, 10, 10, 10, 10, 5], recorder.Values("flushbatching.frames_per_send"));
        Assert.Equal(95, recorder.Sum("flushbatching.frames.received"));
        Assert.Equal(95 * 6, recorder.Sum("flushbatching.bytes.received"));
    }

    [Fact]
    public async Task Buffers_rented_counts_the_chunks_a_connection_holds_and_falls_to_zero_when_it_closes()
    {
        using var metrics = new FlushBatchingMetrics();
        using var recorder = new MeterRecorder(metrics);
        var scheduler = new ManualScheduler();
        await using var loopback = Loopback.Listen(ConnectionSettings.Default.WithMetrics(metrics));
        var (client, server) = await loopback.ConnectAsync(ConnectionSettings.Default.WithMetrics(metrics).WithSendScheduler(scheduler));
        var received = new FrameCollector();
        server.Start(received);
        Assert.Equal(0, recorder.Observe("flushbatching.buffers.rented"));

        // Two frames larger than a chunk: a buffer each, both held until the send loop has sent past them.
        client.TryWrite(new byte[40_000]);
        client.TryWrite(new byte[40_000]);
        Assert.Equal(2, recorder.Observe("flushbatching.buffers.rented"));

        scheduler.RunAll();
        await received.WaitForCountAsync(2);
        await client.DisposeAsync();
        await server.DisposeAsync();
        Assert.Equal(0, recorder.Observe("flushbatching.buffers.rented"));
    }
}
