using System.Buffers.Binary;
using FlushBatching.Framing;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Loops;
using FlushBatching.Tests.Support;
using Microsoft.Extensions.Time.Testing;

namespace FlushBatching.Tests.Tcp;

/// <summary>The write queue on its own, no socket: frames, the send loop's next step, water marks, chunk ownership.</summary>
public sealed class FrameWriteQueueTests
{
    private readonly LeakCheckingPool _pool = new();
    private readonly SendSignal _signal = new();

    [Fact]
    public void The_send_loop_parks_on_an_empty_queue_and_the_next_write_asks_to_wake_it_once()
    {
        var queue = new FrameWriteQueue(ConnectionSettings.Default.WithBufferPool(_pool));

        Assert.Equal(FrameWriteQueue.Next.Park, queue.Take(holding: false, _signal, out _, out _));
        Assert.True(queue.TryWrite([1], out var first));
        Assert.True(queue.TryWrite([2], out var second));

        Assert.True(first);
        Assert.False(second);
    }

    [Fact]
    public void Frames_are_taken_in_order_with_their_length_prefix_then_the_burst_ends()
    {
        var queue = new FrameWriteQueue(ConnectionSettings.Default.WithBufferPool(_pool));
        queue.TryWrite([7, 7, 7], out _);
        queue.TryWrite([], out _);

        Assert.Equal(FrameWriteQueue.Next.Send, queue.Take(holding: false, _signal, out var frames, out _));
        Assert.Equal([3, 0, 0, 0, 7, 7, 7], frames[0].ToArray());
        Assert.Equal(0, BinaryPrimitives.ReadInt32LittleEndian(frames[1]));
        Assert.Equal(FrameWriteQueue.Next.BurstEnd, queue.Take(holding: true, _signal, out _, out _));
    }

    [Fact]
    public void Writes_are_refused_above_the_high_water_mark_until_sent_bytes_bring_it_to_the_low_one()
    {
        var queue = new FrameWriteQueue(ConnectionSettings.Default.WithBufferPool(_pool).WithWriteBufferWaterMarks(high: 100, low: 50));
        Assert.True(queue.TryWrite(new byte[96], out _));
        Assert.True(queue.TryWrite(new byte[10], out _));
        var writable = queue.WhenWritableAsync(CancellationToken.None);

        Assert.False(queue.TryWrite([1], out _));
        Assert.False(writable.IsCompleted);
        queue.Take(holding: false, _signal, out var frames, out _);
        queue.OnSent([frames[0]], 100);

        Assert.True(writable.IsCompletedSuccessfully);
        Assert.True(queue.TryWrite([1], out _));
    }

    [Fact]
    public void With_the_frame_size_raised_and_the_marks_left_unset_several_large_messages_queue_without_a_refusal()
    {
        // A refusal costs a large message Akka.Remote's backoff-interval (50 ms) before its retry. Eight 2 MB frames
        // are 16 MB: sixteen 1 MB messages fit under the high-water mark, and the write after them is refused.
        var settings = ConnectionSettings.Default.WithBufferPool(_pool).WithFraming(FramingSettings.Default.WithMaximumFrameSize(2_000_000));
        var queue = new FrameWriteQueue(settings);

        Assert.All(Enumerable.Range(0, 16), i => Assert.True(queue.TryWrite(new byte[1_000_000], out _), $"message {i}"));
        Assert.False(queue.TryWrite([1], out _));
        queue.ReleaseAll([]);
    }

    [Fact]
    public void With_the_marks_unset_a_queue_that_drained_its_backlog_in_no_time_takes_four_times_as_much_before_its_next_refusal()
    {
        // The clock never moves, so the drain from the backlog took no time: as fast as can be.
        var queue = new FrameWriteQueue(ConnectionSettings.Default.WithBufferPool(_pool).WithTimeProvider(new FakeTimeProvider()));
        var payload = new byte[100_000];

        // Frames of 100,004 bytes: the 11th passes the 1,024,000-byte start, the 41st four times it. Five sent leave a
        // backlog; the six after them drain it.
        Assert.Equal(11, WritesTaken(queue, payload));
        queue.Take(holding: false, _signal, out var frames, out _);
        queue.OnSent(frames[..5], 5 * 100_004);
        queue.OnSent(frames[5..], 6 * 100_004);
        frames.Clear();

        Assert.Equal(41, WritesTaken(queue, payload));
        queue.ReleaseAll([]);
    }

    [Fact]
    public void With_the_marks_unset_a_backlog_taken_and_sent_in_one_send_is_measured_from_the_write_that_made_it()
    {
        // The backlog shows first at the write that passes the mark: a send loop that takes everything at once and
        // sends it in one send leaves no backlog for the send to see, so only that write can start the measure.
        var queue = new FrameWriteQueue(ConnectionSettings.Default.WithBufferPool(_pool).WithTimeProvider(new FakeTimeProvider()));
        var payload = new byte[100_000];

        Assert.Equal(11, WritesTaken(queue, payload));
        Assert.Equal(1_024_000, queue.HighWaterMark);
        queue.Take(holding: false, _signal, out var frames, out _);
        queue.OnSent(frames, 11 * 100_004);
        frames.Clear();

        Assert.Equal(4 * 1_024_000, queue.HighWaterMark);
        Assert.Equal(41, WritesTaken(queue, payload));
        queue.ReleaseAll([]);
    }

    [Fact]
    public void A_close_asked_for_stops_the_send_loop_only_once_everything_queued_is_taken()
    {
        var queue = new FrameWriteQueue(ConnectionSettings.Default.WithBufferPool(_pool));
        queue.TryWrite([1], out _);

        Assert.True(queue.RequestClose(out _));
        Assert.False(queue.TryWrite([2], out _));
        Assert.Equal(FrameWriteQueue.Next.Send, queue.Take(holding: false, _signal, out _, out _));
        Assert.Equal(FrameWriteQueue.Next.Stop, queue.Take(holding: false, _signal, out _, out _));
    }

    [Fact]
    public void Every_chunk_goes_back_to_the_pool_once_whether_sent_or_dropped()
    {
        var queue = new FrameWriteQueue(ConnectionSettings.Default.WithBufferPool(_pool));

        // Enough frames to fill several chunks, and one larger than a chunk: some sent, some held by the send loop,
        // and chunks of frames still queued between them and the chunk being written.
        for (var i = 0; i < 200; i++)
        {
            queue.TryWrite(new byte[i == 100 ? 40_000 : 500], out _);
        }

        queue.Take(holding: false, _signal, out var frames, out _);
        var sent = frames.Take(50).ToList();
        queue.OnSent(sent, sent.Sum(frame => (long)frame.Count));
        var held = frames.Skip(50).Take(10).ToList();
        for (var i = 0; i < 60; i++)
        {
            frames[i] = default;
        }

        queue.TryWrite(new byte[500], out _);
        queue.ReleaseAll(held);

        Assert.True(_pool.Rented > 3);
        _pool.AssertAllReturned();
    }

    [Fact]
    public void A_send_loop_that_parks_with_everything_sent_has_returned_every_chunk_and_the_next_write_rents_afresh()
    {
        var queue = new FrameWriteQueue(ConnectionSettings.Default.WithBufferPool(_pool));
        queue.TryWrite(new byte[100], out _);
        queue.Take(holding: false, _signal, out var frames, out _);
        queue.OnSent(frames, 104);
        frames.Clear();

        Assert.Equal(1, _pool.Outstanding);
        Assert.Equal(FrameWriteQueue.Next.Park, queue.Take(holding: false, _signal, out _, out _));
        Assert.Equal(0, _pool.Outstanding);
        Assert.True(queue.TryWrite(new byte[100], out _));
        Assert.Equal((2L, 1), (_pool.Rented, _pool.Outstanding));
        queue.ReleaseAll([]);
        _pool.AssertAllReturned();
    }

    [Fact]
    public void Small_frames_share_a_chunk_to_its_last_byte_and_a_frame_larger_than_a_chunk_gets_a_buffer_of_its_own()
    {
        var queue = new FrameWriteQueue(ConnectionSettings.Default.WithBufferPool(_pool));
        for (var i = 0; i < 10; i++)
        {
            queue.TryWrite(new byte[100], out _);
        }

        Assert.Equal(1, _pool.Rented);
        queue.TryWrite(new byte[FrameChunks.ChunkSize - 10 * 104 - 4], out _); // exactly the rest of the chunk
        Assert.Equal(1, _pool.Rented);
        queue.TryWrite([1], out _);
        Assert.Equal(2, _pool.Rented);
        queue.TryWrite(new byte[40_000], out _);
        Assert.Equal(3, _pool.Rented);
        queue.TryWrite([1], out _); // not after the large frame, in a buffer sized for it alone
        Assert.Equal(4, _pool.Rented);

        queue.Take(holding: false, _signal, out var frames, out _);
        Assert.All(frames.Take(11), frame => Assert.Same(frames[0].Array, frame.Array));
        Assert.Equal(Enumerable.Range(0, 11).Select(i => i * 104), frames.Take(11).Select(frame => frame.Offset));
    }

    [Fact]
    public void Writes_become_writable_again_when_unsent_bytes_fall_exactly_to_the_low_water_mark()
    {
        var queue = new FrameWriteQueue(ConnectionSettings.Default.WithBufferPool(_pool).WithWriteBufferWaterMarks(high: 100, low: 54));
        queue.TryWrite(new byte[50], out _);
        queue.TryWrite(new byte[50], out _);
        Assert.False(queue.IsWritable);

        queue.Take(holding: false, _signal, out var frames, out _);
        queue.OnSent([frames[0]], 54);

        Assert.True(queue.IsWritable);
    }

    [Fact]
    public void Only_writes_refused_by_back_pressure_are_counted_not_those_refused_after_a_close()
    {
        using var metrics = new FlushBatching.Diagnostics.FlushBatchingMetrics();
        using var recorder = new MeterRecorder(metrics);
        var queue = new FrameWriteQueue(ConnectionSettings.Default.WithBufferPool(_pool).WithMetrics(metrics).WithWriteBufferWaterMarks(high: 10, low: 0));
        queue.TryWrite(new byte[20], out _);

        Assert.False(queue.TryWrite([1], out _));
        Assert.Equal(1, recorder.Sum("flushbatching.writes.refused"));
        queue.RequestClose(out _);
        Assert.False(queue.TryWrite([1], out _));
        Assert.Equal(1, recorder.Sum("flushbatching.writes.refused"));
    }

    [Fact]
    public void Waiting_to_write_ends_at_once_while_writable_or_closed_and_a_waiting_writer_is_freed_when_the_queue_is_released()
    {
        var queue = new FrameWriteQueue(ConnectionSettings.Default.WithBufferPool(_pool).WithWriteBufferWaterMarks(high: 10, low: 0));
        Assert.True(queue.WhenWritableAsync(CancellationToken.None).IsCompletedSuccessfully);

        queue.TryWrite(new byte[20], out _);
        var waiting = queue.WhenWritableAsync(CancellationToken.None);
        Assert.False(waiting.IsCompleted);
        queue.Close();

        Assert.True(queue.WhenWritableAsync(CancellationToken.None).IsCompletedSuccessfully);
        queue.ReleaseAll([]);
        Assert.True(waiting.IsCompletedSuccessfully);
    }

    [Fact]
    public void A_close_refuses_writes_at_once_and_the_send_loop_stops_at_its_next_look_even_with_frames_queued()
    {
        var queue = new FrameWriteQueue(ConnectionSettings.Default.WithBufferPool(_pool));
        queue.TryWrite([1], out _);

        queue.Close();

        Assert.False(queue.IsWritable);
        Assert.False(queue.TryWrite([2], out _));
        Assert.Equal(FrameWriteQueue.Next.Stop, queue.Take(holding: false, _signal, out _, out _));
    }

    [Fact]
    public void Once_every_buffer_is_released_the_queue_is_closed_to_writers_and_to_the_send_loop()
    {
        var queue = new FrameWriteQueue(ConnectionSettings.Default.WithBufferPool(_pool));

        queue.ReleaseAll([]);

        Assert.False(queue.TryWrite([1], out _));
        Assert.Equal(FrameWriteQueue.Next.Stop, queue.Take(holding: false, _signal, out _, out _));
    }

    [Fact]
    public void Asking_to_close_refuses_writes_before_the_queue_is_drained()
    {
        var queue = new FrameWriteQueue(ConnectionSettings.Default.WithBufferPool(_pool));
        queue.TryWrite([1, 2], out _);

        queue.RequestClose(out _);

        Assert.False(queue.IsWritable);
        Assert.Equal(6, queue.UnsentBytes);
        Assert.False(queue.RequestClose(out _));
    }

    [Fact]
    public void Parking_clears_an_earlier_wake_so_the_send_loop_waits_for_the_next_write()
    {
        var queue = new FrameWriteQueue(ConnectionSettings.Default.WithBufferPool(_pool));
        _signal.Execute();

        Assert.Equal(FrameWriteQueue.Next.Park, queue.Take(holding: false, _signal, out _, out _));

        Assert.False(_signal.WaitAsync().IsCompleted);
        queue.TryWrite([1], out var wake);
        Assert.True(wake);
    }

    [Fact]
    public void The_buffers_rented_gauge_counts_each_chunk_from_its_rent_to_its_return()
    {
        using var metrics = new FlushBatching.Diagnostics.FlushBatchingMetrics();
        using var recorder = new MeterRecorder(metrics);
        var queue = new FrameWriteQueue(ConnectionSettings.Default.WithBufferPool(_pool).WithMetrics(metrics));
        queue.TryWrite([1], out _);
        queue.TryWrite(new byte[FrameChunks.ChunkSize], out _);

        Assert.Equal(2, recorder.Observe("flushbatching.buffers.rented"));
        queue.Take(holding: false, _signal, out var frames, out _);
        queue.OnSent([frames[0], frames[1]], frames[0].Count + frames[1].Count);
        Assert.Equal(1, recorder.Observe("flushbatching.buffers.rented"));
        frames.Clear();
        queue.ReleaseAll([]);
        Assert.Equal(0, recorder.Observe("flushbatching.buffers.rented"));
    }

    private static int WritesTaken(FrameWriteQueue queue, byte[] payload)
    {
        var taken = 0;
        while (queue.TryWrite(payload, out _))
        {
            taken++;
        }

        return taken;
    }
}
