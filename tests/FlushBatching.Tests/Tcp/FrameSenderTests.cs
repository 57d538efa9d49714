using FlushBatching.Batching;
using FlushBatching.Diagnostics;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Loops;
using FlushBatching.Tests.Support;
using Microsoft.Extensions.Time.Testing;

namespace FlushBatching.Tests.Tcp;

/// <summary>
/// The send loop on its own, no socket: what each send carries and why it was made, how it is woken, and that every
/// buffer goes back when it stops, however it stops.
/// </summary>
public sealed class FrameSenderTests : IDisposable
{
    private readonly LeakCheckingPool _pool = new();
    private readonly FlushBatchingMetrics _metrics = new();
    private readonly MeterRecorder _recorder;

    public FrameSenderTests() => _recorder = new MeterRecorder(_metrics);

    [Fact]
    public async Task A_burst_goes_out_in_sends_of_max_pending_writes_and_its_tail_at_burst_end_each_counted_with_its_reason()
    {
        var (queue, sender, io) = Create(BatchingSettings.Default.WithMaxPendingWrites(3));
        for (var i = 0; i < 7; i++)
        {
            queue.TryWrite(new byte[10], out _);
        }

        await StopAsync(queue, sender, sender.SendToPeerAsync());

        Assert.Equal([3, 3, 1], io.Sends.Select(send => send.Frames));
        Assert.Equal([42, 42, 14], io.Sends.Select(send => send.Bytes));
        Assert.Equal(2, _recorder.Sum("flushbatching.flushes", "count"));
        Assert.Equal(1, _recorder.Sum("flushbatching.flushes", "burst-end"));
        Assert.Equal(7, _recorder.Sum("flushbatching.frames.sent"));
        Assert.Equal(98, _recorder.Sum("flushbatching.bytes.sent"));
        Assert.Equal([3, 3, 1], _recorder.Values("flushbatching.frames_per_send"));
        _pool.AssertAllReturned();
    }

    [Fact]
    public async Task Frames_side_by_side_in_a_chunk_go_as_one_segment_and_a_frame_in_a_buffer_of_its_own_as_another()
    {
        var (queue, sender, io) = Create(BatchingSettings.Default.WithMaxPendingBytes(1_000_000));
        queue.TryWrite(new byte[10], out _);
        queue.TryWrite(new byte[10], out _);
        queue.TryWrite(new byte[FrameChunks.ChunkSize], out _);
        queue.TryWrite(new byte[10], out _);

        await StopAsync(queue, sender, sender.SendToPeerAsync());

        Assert.Equal((3, 4, 3 * 14 + FrameChunks.ChunkSize + 4), Assert.Single(io.Sends));
    }

    [Fact]
    public async Task A_parked_send_loop_sends_nothing_until_its_wake_runs_on_the_send_scheduler()
    {
        var scheduler = new ManualScheduler();
        var (queue, sender, io) = Create(BatchingSettings.Default, scheduler);
        var sending = sender.SendToPeerAsync();

        Assert.True(queue.TryWrite([1], out var wake));
        Assert.True(wake);
        sender.Wake();
        Assert.Empty(io.Sends);
        Assert.Equal(1, scheduler.Pending);

        scheduler.RunAll();
        await Sent(io, 1, sending);
        await StopAsync(queue, sender, sending, scheduler);
    }

    [Fact]
    public async Task A_send_that_fails_ends_the_loop_with_its_error_and_every_buffer_held_or_queued_goes_back()
    {
        var failure = new IOException("peer gone");
        var (queue, sender, io) = Create(BatchingSettings.Default.WithMaxPendingWrites(2), failure: (After: 1, Error: failure));
        for (var i = 0; i < 5; i++)
        {
            queue.TryWrite(new byte[i == 3 ? 40_000 : 100], out _);
        }

        Assert.Same(failure, await Assert.ThrowsAsync<IOException>(sender.SendToPeerAsync));

        Assert.Single(io.Sends);
        Assert.False(queue.TryWrite([1], out _));
        _pool.AssertAllReturned();
    }

    [Fact]
    public async Task Each_send_records_how_long_its_oldest_frame_waited_since_it_was_written()
    {
        var clock = new FakeTimeProvider();
        var (queue, sender, io) = Create(BatchingSettings.Default, time: clock);
        queue.TryWrite([1], out _);
        clock.Advance(TimeSpan.FromMilliseconds(3));
        queue.TryWrite([2], out _);
        clock.Advance(TimeSpan.FromMilliseconds(2));
        var sending = sender.SendToPeerAsync();
        await Sent(io, 2, sending);

        clock.Advance(TimeSpan.FromMilliseconds(100)); // idle: no frame waits, so no delay builds up
        queue.TryWrite([3], out var wake);
        clock.Advance(TimeSpan.FromMilliseconds(1));
        Assert.True(wake);
        sender.Wake();
        await Sent(io, 3, sending);

        Assert.Equal([0.005, 0.001], _recorder.Seconds("flushbatching.queue_delay"));
        await StopAsync(queue, sender, sending);
    }

    [Fact]
    public async Task Unheard_the_queue_delay_reads_no_clock_and_a_listener_that_attaches_while_a_frame_waits_records_none_for_it()
    {
        var clock = new FakeTimeProvider();
        using var unheard = new FlushBatchingMetrics();
        var (queue, sender, io) = Create(BatchingSettings.Default, time: clock, metrics: unheard);
        clock.AutoAdvanceAmount = TimeSpan.FromSeconds(1);
        var before = clock.GetTimestamp();
        queue.TryWrite([1], out _);
        Assert.Equal(before + TimeSpan.TicksPerSecond, clock.GetTimestamp()); // the write read no clock of its own
        clock.AutoAdvanceAmount = TimeSpan.Zero;

        using var late = new MeterRecorder(unheard);
        clock.Advance(TimeSpan.FromMilliseconds(5));
        var sending = sender.SendToPeerAsync();
        await Sent(io, 1, sending);
        queue.TryWrite([2], out var wake);
        clock.Advance(TimeSpan.FromMilliseconds(1));
        Assert.True(wake);
        sender.Wake();
        await Sent(io, 2, sending);

        // Both sends counted; only the second, whose frame was written while heard, has a queue delay.
        Assert.Equal(2, late.Sum("flushbatching.frames.sent"));
        Assert.Equal([0.001], late.Seconds("flushbatching.queue_delay"));
        await StopAsync(queue, sender, sending);
    }

    public void Dispose()
    {
        _recorder.Dispose();
        _metrics.Dispose();
    }

    private (FrameWriteQueue Queue, FrameSender Sender, RecordingIo Io) Create(
        BatchingSettings batching, ManualScheduler? scheduler = null, (int After, Exception Error)? failure = null, TimeProvider? time = null,
        FlushBatchingMetrics? metrics = null)
    {
        var settings = ConnectionSettings.Default.WithBufferPool(_pool).WithMetrics(metrics ?? _metrics).WithBatching(batching).WithSendScheduler(scheduler)
            .WithTimeProvider(time ?? TimeProvider.System);
        var io = new RecordingIo { Failure = failure };
        var queue = new FrameWriteQueue(settings);
        return (queue, new FrameSender(io, queue, settings), io);
    }

    // Waits for the loop to have sent exactly `frames` frames. A loop that ends first fails the test at once with the
    // loop's own error (or, ended in order, with the count it reached), not after a wait's whole patience.
    private static async Task Sent(RecordingIo io, int frames, Task sending)
    {
        await Poll.Until(() => io.Frames >= frames || sending.IsCompleted, $"frame {frames} to be sent");
        if (io.Frames < frames)
        {
            await sending;
            Assert.Fail($"the send loop ended after {io.Frames} frames, before frame {frames} was sent");
        }

        Assert.Equal(frames, io.Frames);
    }

    // Asks the loop to close once everything queued is sent, and waits for it to stop.
    private static async Task StopAsync(FrameWriteQueue queue, FrameSender sender, Task sending, ManualScheduler? scheduler = null)
    {
        if (queue.RequestClose(out var wake) && wake)
        {
            sender.Wake();
            scheduler?.RunAll();
        }

        await Poll.Within(sending);
    }
}
