using DotNetty.Buffers;
using DotNetty.Transport.Channels;
using DotNetty.Transport.Channels.Embedded;
using FlushBatching.Batching;
using FlushBatching.Diagnostics;
using FlushBatching.DotNetty.Tests.Support;
using FlushBatching.Tests.Support;

namespace FlushBatching.DotNetty.Tests;

/// <summary>
/// The handler in an EmbeddedChannel between a flush-counting probe (the socket side) and the tail: every trigger and
/// event has a test with the exact number of flushes that got through and the outbound order, and every test ends
/// with nothing left in the channel, no timer armed and no leaked buffer. Run with write combining on and off: the
/// messages sent are read back out of whatever buffers reach the socket end, so both must send the same.
/// </summary>
public abstract class BatchingWriterHandlerSuite : IDisposable
{
    private static readonly TimeSpan Interval = TimeSpan.FromMilliseconds(40);

    private readonly TimerCountingClock _clock = new();
    private readonly FlushBatchingMetrics _metrics = new();
    private readonly MeterRecorder _recorder;
    private readonly FlushCountingProbe _probe = new();
    private readonly List<int> _sent = [];
    private EmbeddedChannel _channel = null!;
    private BatchingWriterHandler _handler = null!;
    private int _written;

    protected BatchingWriterHandlerSuite() => _recorder = new MeterRecorder(_metrics);

    /// <summary>The handler's combine buffer size: 0 for combining off.</summary>
    protected abstract int CombineBufferSize { get; }

    protected EmbeddedChannel Channel => _channel;

    protected FlushCountingProbe Probe => _probe;

    /// <summary>A write larger than half the combine buffer, which passes through as it is.</summary>
    protected int LargeWrite => Math.Max(64, (CombineBufferSize / 2) + 1);

    [Fact]
    public void Writes_below_every_threshold_are_flushed_once_when_the_burst_ends()
    {
        Start(Settings());
        WriteMany(5);

        Assert.Equal(0, _probe.Flushes);
        _channel.RunPendingTasks();
        Assert.Equal(1, _probe.Flushes);
        Assert.Equal("burst-end", SingleReason());
        AssertAllSentInOrder();
    }

    [Fact]
    public void The_burst_goes_on_while_writes_keep_arriving_behind_the_burst_end_check()
    {
        Start(Settings());
        Write();
        var flushesBehindTheWrites = -1;
        _channel.EventLoop.Execute(() =>
        {
            WriteMany(3); // queued work that writes: the burst is not over yet
            _channel.EventLoop.Execute(() => flushesBehindTheWrites = _probe.Flushes);
        });
        _channel.RunPendingTasks();

        Assert.Equal(0, flushesBehindTheWrites); // the check queued before those writes looked again instead of flushing
        Assert.Equal(1, _probe.Flushes);
        AssertAllSentInOrder();
    }

    [Fact]
    public void Max_pending_writes_flushes_at_the_count()
    {
        Start(Settings(writes: 3));
        WriteMany(7);

        Assert.Equal(2, _probe.Flushes);
        Assert.Equal([0, 1, 2, 3, 4, 5], ReadSent());
        _channel.RunPendingTasks();
        Assert.Equal(3, _probe.Flushes);
        Assert.Equal(2, _recorder.Sum("flushbatching.flushes", "count"));
        AssertAllSentInOrder();
    }

    [Fact]
    public void Max_pending_bytes_flushes_at_the_size()
    {
        Start(Settings(bytes: 100));
        Write(size: 40);
        Write(size: 40);
        Assert.Equal(0, _probe.Flushes);
        Write(size: 40);

        Assert.Equal(1, _probe.Flushes);
        Assert.Equal("bytes", SingleReason());
        AssertAllSentInOrder();
    }

    [Fact]
    public void A_write_after_the_interval_flushes_everything_pending()
    {
        Start(Settings());
        Write();
        _clock.Advance(Interval);
        Write();

        Assert.Equal(1, _probe.Flushes);
        Assert.Equal("interval", SingleReason());
        AssertAllSentInOrder();
    }

    [Fact]
    public void The_interval_timer_flushes_a_burst_that_has_not_ended()
    {
        Start(Settings());
        Write();
        Write(); // a write after the burst-end check was queued: the check will look again
        _clock.Advance(Interval); // the timer hands its flush to the event loop
        Assert.Equal(0, _probe.Flushes);

        _channel.RunPendingTasks();
        Assert.Equal(1, _probe.Flushes);
        Assert.Equal("interval", SingleReason());
        AssertAllSentInOrder();
    }

    [Fact]
    public void An_explicit_flush_waits_for_the_burst_end()
    {
        Start(Settings());
        Write();
        _channel.Flush();

        Assert.Equal(0, _probe.Flushes);
        _channel.RunPendingTasks();
        Assert.Equal(1, _probe.Flushes);
        AssertAllSentInOrder();
    }

    [Fact]
    public void An_explicit_flush_never_waits_longer_than_the_interval()
    {
        Start(Settings());
        Write();
        Write();
        _channel.Flush();
        _clock.Advance(Interval);
        _channel.RunPendingTasks();

        Assert.Equal(1, _probe.Flushes);
        Assert.Equal("interval", SingleReason());
        AssertAllSentInOrder();
    }

    [Fact]
    public void An_explicit_flush_with_nothing_pending_passes_through_at_once()
    {
        Start(Settings());
        _channel.Flush();

        Assert.Equal(1, _probe.Flushes);
        AssertAllSentInOrder();
    }

    [Fact]
    public void With_explicit_flush_ending_bursts_a_flush_sends_what_is_pending_at_once_as_the_burst_end()
    {
        Start(Settings(), explicitFlushEndsBurst: true);
        WriteMany(3);
        _channel.Flush();

        Assert.Equal(1, _probe.Flushes);
        Assert.Equal("burst-end", SingleReason());
        AssertAllSentInOrder();
    }

    [Fact]
    public void With_explicit_flush_ending_bursts_writes_queue_no_burst_end_check_and_wait_for_the_flush()
    {
        // The writer says where its burst ends: a write alone waits for its flush (or a trigger), not for the loop.
        Start(Settings(), explicitFlushEndsBurst: true);
        Write();
        _channel.RunPendingTasks();

        Assert.Equal(0, _probe.Flushes);
        _clock.Advance(Interval);
        _channel.RunPendingTasks();
        Assert.Equal("interval", SingleReason());
        AssertAllSentInOrder();
    }

    [Fact]
    public void A_writes_queued_since_message_counts_the_next_batch_s_queue_delay_from_its_timestamp_and_goes_no_further()
    {
        Start(Settings(), explicitFlushEndsBurst: true);
        var queued = _clock.GetTimestamp();
        _clock.Advance(TimeSpan.FromMilliseconds(7));
        Assert.True(_channel.WriteAsync(new WritesQueuedSince(queued)).IsCompletedSuccessfully);
        Write();
        _clock.Advance(TimeSpan.FromMilliseconds(1));
        _channel.Flush();

        // The flush ended what the timestamp was for: the next batch counts from its own first write.
        Write();
        _clock.Advance(TimeSpan.FromMilliseconds(2));
        _channel.Flush();

        Assert.Equal([0.008, 0.002], _recorder.Seconds("flushbatching.queue_delay"));
        AssertAllSentInOrder();
    }

    [Fact]
    public void Read_complete_flushes_what_is_pending()
    {
        Start(Settings());
        WriteMany(3);
        _channel.Pipeline.FireChannelReadComplete();

        Assert.Equal(1, _probe.Flushes);
        Assert.Equal("read-complete", SingleReason());
        _channel.RunPendingTasks();
        Assert.Equal(1, _probe.Flushes);
        AssertAllSentInOrder();
    }

    [Fact]
    public async Task Close_flushes_what_is_pending_first_and_leaves_no_timer_behind()
    {
        Start(Settings());
        WriteMany(3);
        await _channel.Pipeline.CloseAsync(); // the pipeline's close: EmbeddedChannel's own would run queued tasks first

        Assert.Equal(1, _probe.Flushes);
        Assert.Equal("drain", SingleReason());
        Assert.Equal(0, _clock.LiveTimers);
        AssertAllSentInOrder();
    }

    [Fact]
    public async Task A_disconnect_which_a_stream_channel_turns_into_a_close_flushes_what_is_pending_first()
    {
        // DotNetty passes a disconnect on as a close on channels without one of their own (TCP, and EmbeddedChannel).
        Start(Settings());
        WriteMany(3);
        await _channel.Pipeline.DisconnectAsync();

        Assert.Equal(1, _probe.Flushes);
        Assert.Equal("drain", SingleReason());
        AssertAllSentInOrder();
    }

    [Fact]
    public void An_exception_in_the_pipeline_flushes_what_is_pending_then_travels_on()
    {
        Start(Settings());
        WriteMany(3);
        _channel.Pipeline.FireExceptionCaught(new InvalidOperationException("boom"));

        Assert.Equal(1, _probe.Flushes);
        Assert.Equal("drain", SingleReason());
        Assert.Equal("boom", Assert.Throws<InvalidOperationException>(() => _channel.CheckException()).Message);
        AssertAllSentInOrder();
    }

    [Fact]
    public void Removal_flushes_what_is_pending_and_leaves_no_timer_behind()
    {
        Start(Settings());
        WriteMany(3);
        Assert.Equal(1, _clock.ArmedTimers);
        _channel.Pipeline.Remove(_handler);

        Assert.Equal(1, _probe.Flushes);
        Assert.Equal(0, _clock.LiveTimers);
        _channel.RunPendingTasks();
        Assert.Equal(1, _probe.Flushes);
        AssertAllSentInOrder();
    }

    [Fact]
    public void With_batching_off_each_write_still_records_its_queue_delay()
    {
        // Off, the flush policy reads no clock; the handler reads one for the metric, which is heard here.
        Start(Settings().WithEnabled(false));
        Write();
        Write();

        Assert.Equal([0.0, 0.0], _recorder.Seconds("flushbatching.queue_delay"));
        AssertAllSentInOrder();
    }

    [Fact]
    public void Each_flush_records_how_long_its_oldest_write_waited()
    {
        Start(Settings());
        Write();
        _clock.Advance(TimeSpan.FromMilliseconds(2));
        Write();
        _channel.RunPendingTasks();
        _clock.Advance(TimeSpan.FromMilliseconds(10)); // nothing pending: nothing waits
        Write();
        _clock.Advance(TimeSpan.FromMilliseconds(1));
        _channel.RunPendingTasks();

        Assert.Equal([0.002, 0.001], _recorder.Seconds("flushbatching.queue_delay"));
        AssertAllSentInOrder();
    }

    [Fact]
    public void Each_batch_after_a_flush_gets_its_own_interval_timer()
    {
        Start(Settings(writes: 2));
        WriteMany(2);
        Assert.Equal(0, _clock.ArmedTimers);

        Write();

        Assert.Equal(1, _clock.ArmedTimers);
        _channel.RunPendingTasks();
        AssertAllSentInOrder();
    }

    [Fact]
    public void A_timer_that_fires_after_its_batch_was_flushed_leaves_the_next_batch_its_own_timer()
    {
        Start(Settings());
        Write();
        _clock.Advance(Interval); // the timer hands its flush to the event loop...
        _channel.Pipeline.FireChannelReadComplete(); // ...but the batch is flushed before that runs
        _channel.RunPendingTasks();

        Write();

        Assert.Equal(1, _clock.ArmedTimers);
        _channel.RunPendingTasks();
        AssertAllSentInOrder();
    }

    [Fact]
    public async Task Going_inactive_forgets_what_was_pending_cancels_its_timer_and_travels_on()
    {
        Start(Settings());
        var events = new InboundEventRecorder();
        _channel.Pipeline.AddLast(events);
        _ = Write(); // fails with the channel; this test watches what is left of it
        _ = Write();

        _channel.Pipeline.FireChannelInactive();

        Assert.Equal(["inactive"], events.Seen);
        Assert.Equal(0, _clock.ArmedTimers);
        await _channel.Pipeline.CloseAsync();
        Assert.DoesNotContain(_recorder.Measurements, m => m.Instrument == "flushbatching.flushes");
    }

    [Fact]
    public void A_change_of_writability_travels_on()
    {
        Start(Settings());
        var events = new InboundEventRecorder();
        _channel.Pipeline.AddLast(events);

        _channel.Pipeline.FireChannelWritabilityChanged();

        Assert.Equal(["writability"], events.Seen);
    }

    [Fact]
    public void Turning_unwritable_flushes_what_is_pending()
    {
        Start(Settings());
        _channel.Configuration.WriteBufferHighWaterMark = 64;
        _channel.Configuration.WriteBufferLowWaterMark = 32;
        Write(size: 16);
        Assert.Equal(0, _probe.Flushes);
        Write(size: LargeWrite);

        Assert.Equal(1, _probe.Flushes);
        Assert.Equal("drain", SingleReason());
        AssertAllSentInOrder();
    }

    [Fact]
    public async Task No_timer_is_armed_while_nothing_is_pending()
    {
        Start(Settings());
        Assert.Equal(0, _clock.ArmedTimers);
        _ = Write(); // its task completes at the flush; this test watches the timer
        Assert.Equal(1, _clock.ArmedTimers);
        _channel.RunPendingTasks();
        Assert.Equal(0, _clock.ArmedTimers);
        _ = Write();
        await _channel.CloseAsync();

        Assert.Equal(0, _clock.ArmedTimers);
        AssertAllSentInOrder();
    }

    [Fact]
    public void With_batching_off_every_write_is_flushed_by_itself()
    {
        Start(BatchingSettings.Default.WithEnabled(false));
        WriteMany(3);

        Assert.Equal(3, _probe.Flushes);
        Assert.Equal(3, _recorder.Sum("flushbatching.flushes", "unbatched"));
        Assert.Equal(0, _clock.ArmedTimers);
        AssertAllSentInOrder();
    }

    [Fact]
    public async Task Write_tasks_complete_when_flushed_and_fail_like_without_the_handler()
    {
        Start(Settings());
        var first = Write();
        Assert.False(first.IsCompleted);
        _channel.RunPendingTasks();
        Assert.True(first.IsCompletedSuccessfully);
        AssertAllSentInOrder();

        await _channel.CloseAsync();
        var afterClose = _channel.WriteAsync(Buffer(8, 99));
        var plain = new EmbeddedChannel();
        await plain.CloseAsync();
        var plainAfterClose = plain.WriteAsync(Buffer(8, 99));

        Assert.True(afterClose.IsFaulted);
        Assert.Equal(plainAfterClose.Exception!.InnerException!.GetType(), afterClose.Exception!.InnerException!.GetType());
    }

    [Fact]
    public void Flushes_are_counted_on_the_core_meter()
    {
        Start(Settings(writes: 2));
        Write(size: 10);
        Write(size: 20);
        Write(size: 30);
        _channel.RunPendingTasks();

        Assert.Equal(3, _recorder.Sum("flushbatching.frames.sent"));
        Assert.Equal(60, _recorder.Sum("flushbatching.bytes.sent"));
        Assert.Equal(2, _recorder.Sum("flushbatching.flushes"));
        Assert.Equal([2, 1], _recorder.Values("flushbatching.frames_per_send"));
        AssertAllSentInOrder();
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(42)]
    [InlineData(20261122)]
    public async Task Random_sequences_send_everything_in_order_and_never_hold_past_a_trigger(int seed)
    {
        var random = new Random(seed);
        Start(Settings(writes: random.Next(1, 10), bytes: random.Next(16, 400)));
        for (var step = 0; step < 2000 && _channel.Open; step++)
        {
            switch (random.Next(10))
            {
                case < 5:
                    _ = Write(size: random.Next(8, 120));
                    break;
                case 5:
                    _channel.Flush();
                    break;
                case 6:
                    _channel.Pipeline.FireChannelReadComplete();
                    ReadSent();
                    Assert.True(_sent.Count == _written, $"seed {seed}: read complete left writes pending");
                    break;
                case 7:
                    _clock.Advance(TimeSpan.FromMilliseconds(random.Next(0, 60)));
                    break;
                case 8:
                    _channel.RunPendingTasks();
                    ReadSent();
                    Assert.True(_sent.Count == _written, $"seed {seed}: the burst ended with writes pending");
                    Assert.Equal(0, _clock.ArmedTimers);
                    break;
                default:
                    if (random.Next(50) == 0)
                    {
                        await _channel.CloseAsync();
                    }

                    break;
            }
        }

        _channel.RunPendingTasks();
        AssertAllSentInOrder();
    }

    public void Dispose()
    {
        _channel?.FinishAndReleaseAll();
        _recorder.Dispose();
        _metrics.Dispose();
        LeakDetection.AssertNoLeaks();
        GC.SuppressFinalize(this);
    }

    protected static BatchingSettings Settings(int writes = 30, long bytes = 16 * 1024) =>
        BatchingSettings.Default.WithMaxPendingWrites(writes).WithMaxPendingBytes(bytes).WithFlushInterval(Interval);

    protected void Start(BatchingSettings settings, bool explicitFlushEndsBurst = false)
    {
        _handler = new BatchingWriterHandler(settings, CombineBufferSize, _clock, _metrics) { ExplicitFlushEndsBurst = explicitFlushEndsBurst };
        _channel = new EmbeddedChannel(_probe, _handler);
    }

    /// <summary>Writes a message of <paramref name="size"/> bytes (at least 8): its size, its sequence number, zeros.</summary>
    protected Task Write(int size = 8) => _channel.WriteAsync(Buffer(size, _written++));

    protected void WriteMany(int count)
    {
        for (var i = 0; i < count; i++)
        {
            Write();
        }
    }

    protected static IByteBuffer Buffer(int size, int sequence)
    {
        var buffer = PooledByteBufferAllocator.Default.Buffer(size);
        buffer.WriteInt(size);
        buffer.WriteInt(sequence);
        buffer.WriteZero(size - 8);
        return buffer;
    }

    /// <summary>
    /// Takes what reached the socket end since the last call, releasing each buffer: the sequence numbers of the
    /// messages in it, however many each buffer holds.
    /// </summary>
    protected List<int> ReadSent() => [.. ReadBuffers().SelectMany(messages => messages)];

    /// <summary>Like <see cref="ReadSent"/>, one list per buffer that reached the socket end.</summary>
    protected List<List<int>> ReadBuffers()
    {
        var buffers = new List<List<int>>();
        while (_channel.ReadOutbound<IByteBuffer>() is { } buffer)
        {
            var messages = new List<int>();
            for (var offset = buffer.ReaderIndex; offset < buffer.WriterIndex; offset += buffer.GetInt(offset))
            {
                messages.Add(buffer.GetInt(offset + 4));
            }

            buffer.Release();
            buffers.Add(messages);
            _sent.AddRange(messages);
        }

        return buffers;
    }

    protected string? SingleReason() =>
        Assert.Single(_recorder.Measurements, m => m.Instrument == "flushbatching.flushes").Reason;

    protected void AssertAllSentInOrder()
    {
        ReadSent();
        Assert.Equal(Enumerable.Range(0, _written), _sent);
        Assert.False(_channel.FinishAndReleaseAll(), "messages were left in the channel");
        Assert.Equal(0, _clock.ArmedTimers);
    }
}
