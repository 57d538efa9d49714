using FlushBatching.Batching;
using FlushBatching.Diagnostics;
using FlushBatching.Tcp;
using FlushBatching.Tests.Support;
using Microsoft.Extensions.Time.Testing;

namespace FlushBatching.Tests.Tcp;

/// <summary>
/// One test per flush trigger, over a real loopback connection. Writes are queued while the send loop is held
/// by a hand-run scheduler, then it runs once; the sends that reached the socket are counted exactly, on a Meter of
/// the test's own.
/// </summary>
public sealed class FlushTriggerTests : IDisposable
{
    private readonly ManualScheduler _scheduler = new();
    private readonly FlushBatchingMetrics _metrics = new();
    private readonly MeterRecorder _recorder;

    public FlushTriggerTests() => _recorder = new MeterRecorder(_metrics);

    public void Dispose()
    {
        _recorder.Dispose();
        _metrics.Dispose();
    }

    private long Sends => _recorder.Sum("flushbatching.flushes");

    private long Flushes(string reason) => _recorder.Sum("flushbatching.flushes", reason);

    private async Task SendAsync(BatchingSettings batching, int frames, int payloadSize, FakeTimeProvider? clock = null)
    {
        await using var loopback = Loopback.Listen();
        var settings = ConnectionSettings.Default.WithBatching(batching).WithSendScheduler(_scheduler).WithMetrics(_metrics);
        if (clock is not null)
        {
            settings = settings.WithTimeProvider(clock);
        }

        var (client, server) = await loopback.ConnectAsync(settings);
        var received = new FrameCollector();
        server.Start(received);

        for (var i = 0; i < frames; i++)
        {
            Assert.True(client.TryWrite(Payload(i, payloadSize)));
        }

        Assert.Equal(0, Sends);
        Assert.Equal(1, _scheduler.Pending);
        _scheduler.RunAll();
        await received.WaitForCountAsync(frames);

        Assert.Equal(Enumerable.Range(0, frames).Select(i => Payload(i, payloadSize)), received.Frames);
    }

    private static byte[] Payload(int index, int size) => Enumerable.Range(index, size).Select(b => (byte)b).ToArray();

    [Fact]
    public async Task Count_trigger_sends_max_pending_writes_frames_at_a_time()
    {
        await SendAsync(BatchingSettings.Default.WithMaxPendingWrites(10), frames: 100, payloadSize: 20);
        Assert.Equal(10, Sends);
        Assert.Equal(10, Flushes("count"));
        Assert.Equal(0, Flushes("burst-end"));
    }

    [Fact]
    public async Task Bytes_trigger_sends_once_max_pending_bytes_are_pending()
    {
        // Each frame is 96 + 4 = 100 bytes, so 1000 bytes are pending after every tenth frame.
        var settings = BatchingSettings.Default.WithMaxPendingWrites(1000).WithMaxPendingBytes(1000);
        await SendAsync(settings, frames: 100, payloadSize: 96);
        Assert.Equal(10, Sends);
        Assert.Equal(10, Flushes("bytes"));
        Assert.Equal(10_000, _recorder.Sum("flushbatching.bytes.sent"));
    }

    [Fact]
    public async Task Interval_trigger_sends_once_the_oldest_frame_was_held_flush_interval()
    {
        // The clock moves 10 ms each time the policy reads it: once as a batch opens, then once per frame, so
        // the fifth frame of each batch finds the first one held 40 ms.
        var clock = new FakeTimeProvider { AutoAdvanceAmount = TimeSpan.FromMilliseconds(10) };
        var settings = BatchingSettings.Default.WithMaxPendingWrites(1000).WithMaxPendingBytes(1 << 20).WithFlushInterval(TimeSpan.FromMilliseconds(40));
        await SendAsync(settings, frames: 100, payloadSize: 8, clock);
        Assert.Equal(20, Sends);
        Assert.Equal(20, Flushes("interval"));
    }

    [Fact]
    public async Task Burst_end_sends_everything_queued_in_one_send()
    {
        await using var loopback = Loopback.Listen();
        var (client, server) = await loopback.ConnectAsync(ConnectionSettings.Default.WithSendScheduler(_scheduler).WithMetrics(_metrics));
        var received = new FrameCollector();
        server.Start(received);

        for (var i = 0; i < 5; i++)
        {
            client.TryWrite(Payload(i, 3));
        }

        _scheduler.RunAll();
        await received.WaitForCountAsync(5);
        for (var i = 0; i < 7; i++)
        {
            client.TryWrite(Payload(i, 3));
        }

        _scheduler.RunAll();
        await received.WaitForCountAsync(12);

        Assert.Equal(2, Sends);
        Assert.Equal(2, Flushes("burst-end"));
        Assert.Equal(12, _recorder.Sum("flushbatching.frames.sent"));
    }

    [Fact]
    public async Task A_single_write_at_light_load_goes_out_at_once_without_waiting_for_the_interval()
    {
        // A 1 hour interval would hang this test if a lone write waited for it.
        await using var loopback = Loopback.Listen();
        var settings = ConnectionSettings.Default.WithBatching(BatchingSettings.Default.WithFlushInterval(TimeSpan.FromHours(1))).WithMetrics(_metrics);
        var (client, server) = await loopback.ConnectAsync(settings);
        var received = new FrameCollector();
        server.Start(received);

        for (var i = 1; i <= 20; i++)
        {
            client.TryWrite(Payload(i, 10));
            await received.WaitForCountAsync(i);
        }

        Assert.Equal(20, Flushes("burst-end"));
    }

    [Fact]
    public async Task Batching_off_sends_every_frame_by_itself()
    {
        await SendAsync(BatchingSettings.Default.WithEnabled(false), frames: 25, payloadSize: 10);
        Assert.Equal(25, Sends);
        Assert.Equal(25, Flushes("unbatched"));
    }
}
