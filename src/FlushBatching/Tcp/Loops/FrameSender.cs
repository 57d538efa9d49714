using System.Runtime.CompilerServices;
using FlushBatching.Batching;
using FlushBatching.Tcp.Io;

namespace FlushBatching.Tcp.Loops;

/// <summary>
/// A connection's send loop: takes whatever the <see cref="FrameWriteQueue"/> holds, asks the
/// <see cref="FlushPolicy"/> when to flush, and sends each batch in one gathered send. When the queue is empty it
/// flushes what it holds (burst end) and parks until a write wakes it.
/// </summary>
internal sealed class FrameSender
{
    private readonly ConnectionIo _io;
    private readonly FrameWriteQueue _queue;
    private readonly ConnectionSettings _settings;
    private readonly FlushPolicy _policy;
    private readonly SendSignal _signal = new();
    private readonly List<ArraySegment<byte>> _batch = [];
    private readonly List<ArraySegment<byte>> _sendList = [];

    // When the oldest frame of the batch was written (the first frame of the take that began it): the send's queue
    // delay. The policy keeps its own start, when this loop took that frame, for the flush interval.
    private long _batchSince;

    public FrameSender(ConnectionIo io, FrameWriteQueue queue, ConnectionSettings settings)
    {
        _io = io;
        _queue = queue;
        _settings = settings;
        _policy = new FlushPolicy(settings.Batching, settings.TimeProvider);
    }

    /// <summary>Wakes the parked send loop through <see cref="ConnectionSettings.SendScheduler"/>, or the thread pool.</summary>
    public void Wake()
    {
        if (_settings.SendScheduler is { } scheduler)
        {
            scheduler.Schedule(SendSignal.Set, _signal);
        }
        else
        {
            ThreadPool.UnsafeQueueUserWorkItem(_signal, preferLocal: false);
        }
    }

    /// <summary>
    /// Wakes the send loop on the thread pool whatever the scheduler: a wake queued there may never run, and an
    /// ending must not wait on that seam. A second wake for the same park is ignored.
    /// </summary>
    public void WakeToStop() => ThreadPool.UnsafeQueueUserWorkItem(_signal, preferLocal: false);

    /// <summary>
    /// Sends until the queue is closed, or a close was asked for and everything is sent; then returns every buffer
    /// still held to the pool. Throws what the socket threw.
    /// </summary>
    public async Task SendToPeerAsync()
    {
        try
        {
            while (true)
            {
                var next = _queue.Take(_policy.HasPending, _signal, out var frames, out var since);
                if (next == FrameWriteQueue.Next.Stop)
                {
                    break;
                }

                if (next == FrameWriteQueue.Next.Park)
                {
                    await _signal.WaitAsync().ConfigureAwait(false);
                }
                else if (next == FrameWriteQueue.Next.BurstEnd)
                {
                    if (_policy.OnBurstEnd() is var reason and not FlushReason.None)
                    {
                        await FlushAsync(reason).ConfigureAwait(false);
                    }
                }
                else
                {
                    await GatherAsync(frames, since).ConfigureAwait(false);
                }
            }
        }
        finally
        {
            _queue.ReleaseAll(_batch);
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask GatherAsync(List<ArraySegment<byte>> frames, long since)
    {
        for (var i = 0; i < frames.Count; i++)
        {
            var frame = frames[i];

            // Cleared as it moves to the batch, so that a chunk is never counted twice when buffers are returned.
            frames[i] = default;
            if (!_policy.HasPending)
            {
                _batchSince = since;
            }

            _batch.Add(frame);
            var reason = _policy.OnWrite(frame.Count);
            if (reason != FlushReason.None)
            {
                await FlushAsync(reason).ConfigureAwait(false);
            }
        }

        frames.Clear();
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask FlushAsync(FlushReason reason)
    {
        var frames = _policy.PendingWrites;
        var bytes = _policy.PendingBytes;

        // Counted before the send, so that a peer that has read every frame also sees final counters.
        _settings.Metrics.RecordSend(frames, bytes, reason, _batchSince, _settings.TimeProvider);

        // Frames written one after another sit side by side in a chunk: one segment each run, so a batch is
        // usually a single-buffer send.
        foreach (var frame in _batch)
        {
            var last = _sendList.Count - 1;
            if (last >= 0 && _sendList[last].Array == frame.Array && _sendList[last].Offset + _sendList[last].Count == frame.Offset)
            {
                _sendList[last] = new ArraySegment<byte>(frame.Array!, _sendList[last].Offset, _sendList[last].Count + frame.Count);
            }
            else
            {
                _sendList.Add(frame);
            }
        }

        await _io.SendAsync(_sendList, bytes).ConfigureAwait(false);
        _batch.Clear();
        _policy.OnFlushed();
        _queue.OnSent(_sendList, bytes);
        _sendList.Clear();
    }
}
