using System.Collections.Concurrent;
using FlushBatching.Diagnostics;
using FlushBatching.Framing;

namespace FlushBatching.DotNetty;

/// <summary>
/// The payloads a <see cref="QueuedChannelWriter"/> has accepted and its event loop has not taken yet. Writers on any
/// thread add; one hand-off at a time, on the event loop, takes them in order. It counts the frame bytes it holds, so
/// that a write is refused once they pass the room the channel's outbound buffer has left below its high-water mark: a
/// busy event loop cannot let one burst queue without bound. No channel here: the writer passes the room in and runs
/// the hand-off.
/// </summary>
/// <remarks>
/// What a hand-off hands on is taken off the count after every <see cref="UncountEvery"/> bytes and at the hand-off's end, not per
/// payload: a count that writing threads and the event loop both changed per message would move between their cores
/// each time. Until taken off, bytes handed on are counted twice (here and in the outbound buffer), by less than twice
/// that much. A payload of <see cref="UncountEvery"/> bytes or more is taken off, with what was handed on before it, just
/// before it is handed on: counted twice, a whole large payload would refuse writes while the unsent bytes were below
/// the mark (a CI run saw a 60 kB payload refused after one other under a 64 KiB mark). While it is being handed on it is
/// counted nowhere, so a write racing it may be accepted up to that payload past the mark, as the last write accepted
/// below the mark may take the bytes past it anyway.
/// </remarks>
/// <param name="time">The clock <see cref="WaitingSince"/> is read from: the writer's.</param>
/// <param name="metrics">Whose <c>flushbatching.queue_delay</c> <see cref="WaitingSince"/> serves: read only while it is heard.</param>
internal sealed class PayloadQueue(TimeProvider time, FlushBatchingMetrics metrics)
{
    /// <summary>How many bytes a hand-off hands on before it takes them off the count: 16 KiB, whatever the batch size.</summary>
    public const long UncountEvery = 16 * 1024;

    private readonly ConcurrentQueue<ReadOnlyMemory<byte>> _queue = new();
    private long _queuedBytes;
    private int _handOffScheduled;
    private long _waitingSince;

    /// <summary>What <see cref="TryEnqueue"/> did.</summary>
    public enum Outcome
    {
        /// <summary>Nothing was queued: the bytes held passed the room.</summary>
        Refused,

        /// <summary>Queued; a hand-off is already due and will take it.</summary>
        Queued,

        /// <summary>Queued, and no hand-off is due: the caller must schedule one.</summary>
        QueuedHandOffNeeded,
    }

    /// <summary>The frame bytes held (payloads and their prefixes), less what a running hand-off has taken off.</summary>
    public long QueuedBytes => Volatile.Read(ref _queuedBytes);

    /// <summary>
    /// When the write that asked for the coming hand-off was queued, as a timestamp: the oldest payload a hand-off hands on
    /// waited at most since then; 0 when nobody listened to <c>flushbatching.queue_delay</c> then, and no clock was read.
    /// Read on the event loop before <see cref="HandOff{TState}"/>.
    /// </summary>
    public long WaitingSince => Volatile.Read(ref _waitingSince);

    /// <summary>Queues <paramref name="payload"/> unless the bytes held already pass <paramref name="room"/>.</summary>
    /// <param name="payload">The payload, kept as it is (not copied): the writer must not change it until it is sent.</param>
    /// <param name="room">What the channel can still take before it turns unwritable; negative when it is unwritable.</param>
    public Outcome TryEnqueue(ReadOnlyMemory<byte> payload, long room)
    {
        if (Volatile.Read(ref _queuedBytes) > room)
        {
            return Outcome.Refused;
        }

        Interlocked.Add(ref _queuedBytes, FrameLength(payload));
        _queue.Enqueue(payload);
        if (Interlocked.Exchange(ref _handOffScheduled, 1) != 0)
        {
            return Outcome.Queued;
        }

        // Written before the caller schedules the hand-off, so that hand-off reads it.
        Volatile.Write(ref _waitingSince, metrics.QueueDelayStart(time));
        return Outcome.QueuedHandOffNeeded;
    }

    /// <summary>On the event loop: hands every payload queued to <paramref name="write"/>, in order.</summary>
    public void HandOff<TState>(TState state, Action<TState, ReadOnlyMemory<byte>> write)
    {
        // Clear the flag before taking payloads: a write racing with this hand-off either is taken below or asks anew.
        // A full fence, not a volatile store: a store followed by a load may be reordered (on x64 too), and a writer
        // that still saw the flag set after its enqueue, while this hand-off's look at the queue came first, would strand
        // its payload until the next write. Interlocked.Exchange orders the store before the reads below.
        Interlocked.Exchange(ref _handOffScheduled, 0);
        long taken = 0;
        while (_queue.TryDequeue(out var payload))
        {
            var length = FrameLength(payload);
            if (length >= UncountEvery)
            {
                Interlocked.Add(ref _queuedBytes, -(taken + length));
                taken = 0;
                write(state, payload);
                continue;
            }

            taken += length;
            write(state, payload);
            if (taken >= UncountEvery)
            {
                Interlocked.Add(ref _queuedBytes, -taken);
                taken = 0;
            }
        }

        Interlocked.Add(ref _queuedBytes, -taken);
    }

    /// <summary>Drops what is queued, for a connection that has ended: nothing dropped will be written.</summary>
    public void Clear()
    {
        while (_queue.TryDequeue(out var payload))
        {
            Interlocked.Add(ref _queuedBytes, -FrameLength(payload));
        }
    }

    private static long FrameLength(ReadOnlyMemory<byte> payload) => FrameEncoder.FrameLength(payload.Length);
}
