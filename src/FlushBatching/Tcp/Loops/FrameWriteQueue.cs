using FlushBatching.Framing;

namespace FlushBatching.Tcp.Loops;

/// <summary>
/// A connection's outbound frames between the writers and the send loop: the frames queued, the back-pressure marks,
/// and whether the send loop is parked. Any thread writes; one send loop takes. The frames' memory is
/// <see cref="FrameChunks"/>'.
/// </summary>
/// <remarks>
/// Each frame (prefix and payload together, one copy of the payload) is appended to the current pooled chunk under a
/// short lock. Only a write that finds the send loop parked asks for a wake-up, so a burst costs one wake-up and no
/// allocation.
/// </remarks>
internal sealed class FrameWriteQueue
{
    private readonly ConnectionSettings _settings;
    private readonly FrameChunks _chunks;
    private readonly WriteBufferMarks _marks;
    private readonly object _lock = new();

    // Guarded by _lock.
    private List<ArraySegment<byte>> _queue = [];
    private List<ArraySegment<byte>> _taken = [];
    private long _unsentBytes;
    private long _sentBytes;
    private bool _parked;
    private bool _closeRequested;

    // The queue's own end, not the connection's: no frame is taken or sent from here on. Set when the connection ends
    // (Close) and when the send loop ends (ReleaseAll), which a graceful close reaches before the connection's end: the
    // connection's end, and its reason, are FramedConnection's alone.
    private bool _closed;
    private TaskCompletionSource? _writableWaiter;

    // When the queue last went from empty to holding a frame: the oldest frame's write, for the queue-delay metric.
    private long _busySince;

    private volatile bool _writable = true;

    public FrameWriteQueue(ConnectionSettings settings)
    {
        _settings = settings;
        _chunks = new FrameChunks(settings);
        _marks = new WriteBufferMarks(settings);
    }

    /// <summary>What the send loop is to do next: send the frames taken, flush what it holds as the burst has ended,
    /// wait for the signal, or stop (closed, or a close was asked for and everything is sent).</summary>
    public enum Next
    {
        Send,
        BurstEnd,
        Park,
        Stop,
    }

    /// <summary>Whether writes are taken: false from the high-water mark down to the low one, and once closing.</summary>
    public bool IsWritable => _writable;

    /// <summary>Whether <see cref="RequestClose"/> was called.</summary>
    public bool IsCloseRequested => Volatile.Read(ref _closeRequested);

    /// <summary>Whether writes are refused for good: a close was asked for, or the queue is closed.</summary>
    public bool IsClosing => Volatile.Read(ref _closeRequested) || Volatile.Read(ref _closed);

    /// <summary>Unsent bytes above which writes are refused now: set, or following the connection's rate.</summary>
    public long HighWaterMark
    {
        get
        {
            lock (_lock)
            {
                return _marks.High;
            }
        }
    }

    /// <summary>Bytes queued and not yet handed to the socket.</summary>
    public long UnsentBytes
    {
        get
        {
            lock (_lock)
            {
                return _unsentBytes;
            }
        }
    }

    /// <summary>Queues one frame carrying <paramref name="payload"/>, or refuses it above the high-water mark or once closing.</summary>
    /// <param name="payload">The payload; the caller has checked that it fits in a frame.</param>
    /// <param name="wake">Whether the send loop is parked and must be woken.</param>
    public bool TryWrite(ReadOnlySpan<byte> payload, out bool wake)
    {
        wake = false;
        if (!_writable)
        {
            return Refuse();
        }

        var length = FrameEncoder.FrameLength(payload.Length);
        lock (_lock)
        {
            if (!_writable)
            {
                return Refuse();
            }

            if (_queue.Count == 0)
            {
                _busySince = _settings.Metrics.QueueDelayStart(_settings.TimeProvider);
            }

            var frame = _chunks.Reserve(length);
            FrameEncoder.WriteHeader(frame, payload.Length, _settings.Framing.ByteOrder);
            payload.CopyTo(frame.AsSpan(FramingSettings.HeaderLength));
            _queue.Add(frame);
            _unsentBytes += length;
            if (_unsentBytes > _marks.High)
            {
                // Where a backlog shows first when the send loop takes everything at once: the sends after measure it.
                _writable = false;
                _marks.Observe(_sentBytes, _unsentBytes);
            }

            wake = _parked;
            _parked = false;
        }

        return true;
    }

    /// <summary>Completes when writes are taken again, or the queue is closing.</summary>
    public Task WhenWritableAsync(CancellationToken cancellationToken)
    {
        Task task;
        lock (_lock)
        {
            if (_writable || _closed || _closeRequested)
            {
                return Task.CompletedTask;
            }

            _writableWaiter ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            task = _writableWaiter.Task;
        }

        return task.WaitAsync(cancellationToken);
    }

    /// <summary>Refuses writes from now on; the send loop sends what is queued, then stops.</summary>
    /// <param name="wake">Whether the send loop is parked and must be woken.</param>
    /// <returns><c>false</c> when a close was already asked for, or the queue is closed.</returns>
    public bool RequestClose(out bool wake)
    {
        lock (_lock)
        {
            wake = false;
            if (_closeRequested || _closed)
            {
                return false;
            }

            _closeRequested = true;
            _writable = false;
            wake = _parked;
            return true;
        }
    }

    /// <summary>Closes at once: writes are refused, and the send loop stops at its next look.</summary>
    public void Close()
    {
        lock (_lock)
        {
            _closed = true;
            _writable = false;
        }
    }

    /// <summary>
    /// The send loop's look at the queue: takes every frame queued, or says the burst ended, or parks the loop
    /// (resetting <paramref name="signal"/> under the lock, so no wake-up can fall between). Parking returns the chunk
    /// last written to, all of it sent by then, so an idle connection holds no buffer.
    /// </summary>
    /// <param name="holding">Whether the send loop holds frames not yet flushed.</param>
    /// <param name="signal">The send loop's wake-up.</param>
    /// <param name="frames">The frames taken, with <see cref="Next.Send"/>; the send loop clears the list when done.</param>
    /// <param name="since">
    /// With <see cref="Next.Send"/>, when the oldest frame taken was written, as a <see cref="TimeProvider"/> timestamp:
    /// one clock read per burst, not per frame, and none while nobody listens to <c>flushbatching.queue_delay</c> (0 then).
    /// </param>
    public Next Take(bool holding, SendSignal signal, out List<ArraySegment<byte>> frames, out long since)
    {
        lock (_lock)
        {
            frames = _taken;
            since = 0;
            if (_closed)
            {
                return Next.Stop;
            }

            if (_queue.Count > 0)
            {
                (_queue, _taken) = (_taken, _queue);
                frames = _taken;
                since = _busySince;
                return Next.Send;
            }

            if (holding)
            {
                return Next.BurstEnd;
            }

            if (_closeRequested)
            {
                return Next.Stop;
            }

            signal.Reset();
            _parked = true;
            _chunks.Seal();
        }

        _chunks.ReturnSent();
        return Next.Park;
    }

    /// <summary>Send loop only: <paramref name="sent"/> (of <paramref name="bytes"/> bytes) is on the wire.</summary>
    public void OnSent(List<ArraySegment<byte>> sent, long bytes)
    {
        foreach (var segment in sent)
        {
            _chunks.MovePast(segment.Array!);
        }

        TaskCompletionSource? waiter = null;
        lock (_lock)
        {
            _unsentBytes -= bytes;
            _sentBytes += bytes;
            _marks.Observe(_sentBytes, _unsentBytes);
            if (!_writable && !_closeRequested && !_closed && _unsentBytes <= _marks.Low)
            {
                _writable = true;
                waiter = _writableWaiter;
                _writableWaiter = null;
            }
        }

        waiter?.TrySetResult();
    }

    /// <summary>Once the send loop ends: closes the queue and returns every chunk still held, each once.</summary>
    /// <param name="held">The frames the send loop held unsent.</param>
    public void ReleaseAll(List<ArraySegment<byte>> held)
    {
        TaskCompletionSource? waiter;
        lock (_lock)
        {
            _closed = true;
            _writable = false;

            // Oldest first. The chunk being written holds the newest frame, so it is among these or is the last
            // chunk sent: nothing else to return.
            _chunks.MovePast(held);
            _chunks.MovePast(_taken);
            _chunks.MovePast(_queue);
            waiter = _writableWaiter;
            _writableWaiter = null;
        }

        _chunks.ReturnSent();
        waiter?.TrySetResult();
    }

    // A refusal is back-pressure unless the queue is closing; only back-pressure is counted.
    private bool Refuse()
    {
        if (!Volatile.Read(ref _closeRequested) && !Volatile.Read(ref _closed))
        {
            _settings.Metrics.RecordRefused();
        }

        return false;
    }
}
