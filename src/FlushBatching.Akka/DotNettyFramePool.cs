using System.Numerics;
using DotNetty.Buffers;
using DotNetty.Common.Concurrency;

namespace FlushBatching.Akka;

/// <summary>
/// The buffers one <see cref="DotNettyAssociationHandle"/> frames its payloads into, reused, object and array, once
/// whoever holds one releases it. DotNetty 0.7.6's pooled allocator pools arrays but makes a new buffer object for
/// every allocation and takes a stack trace for its leak detector on one in 128 of them: about 250 bytes a message
/// on this path. A frame lives for a moment (the batching handler copies it into its combine buffer and releases it,
/// or the socket sends it), so a handful per channel serve every message.
/// </summary>
/// <remarks>
/// Frames are rented and returned on the channel's event loop. One released anywhere else (nothing on this path does)
/// is left to the garbage collector, as is one above <see cref="MaxKeptCapacity"/> bytes, beyond <see cref="MaxKept"/>
/// frames or beyond <see cref="MaxKeptBytes"/> in all: a channel holds at most that much for reuse.
/// </remarks>
internal sealed class DotNettyFramePool
{
    /// <summary>The most frames kept for reuse.</summary>
    public const int MaxKept = 16;

    /// <summary>The largest frame kept for reuse, 64 KiB: larger ones are rare and would pin memory per channel.</summary>
    public const int MaxKeptCapacity = 64 * 1024;

    /// <summary>The most bytes of frames kept for reuse, 256 KiB.</summary>
    public const int MaxKeptBytes = 256 * 1024;

    private const int MinCapacity = 256;

    private readonly IEventExecutor _eventLoop;
    private readonly Stack<Frame> _kept = new(MaxKept);
    private int _keptBytes;

    public DotNettyFramePool(IEventExecutor eventLoop) => _eventLoop = eventLoop;

    /// <summary>An empty buffer of at least <paramref name="capacity"/> bytes, with a reference count of 1.</summary>
    public IByteBuffer Rent(int capacity)
    {
        // A frame too large to keep is made to measure: growing a kept one would only throw its array away on return.
        if (capacity <= MaxKeptCapacity && _kept.TryPop(out var frame))
        {
            _keptBytes -= frame.ArrayLength;
            frame.Reuse(capacity);
            return frame;
        }

        return new Frame(this, capacity);
    }

    private void Return(Frame frame)
    {
        if (_eventLoop.InEventLoop && _kept.Count < MaxKept && frame.ArrayLength <= MaxKeptCapacity && _keptBytes + frame.ArrayLength <= MaxKeptBytes)
        {
            _keptBytes += frame.ArrayLength;
            _kept.Push(frame);
        }
    }

    // Sizes that may be kept are rounded up to a power of two, so a channel's frames settle on a few sizes and are
    // reused across them; larger ones are made to measure (rounding near int.MaxValue would overflow).
    private static int RoundedUp(int capacity) => capacity switch
    {
        <= MinCapacity => MinCapacity,
        <= MaxKeptCapacity => (int)BitOperations.RoundUpToPowerOf2((uint)capacity),
        _ => capacity,
    };

    private sealed class Frame : UnpooledHeapByteBuffer
    {
        private readonly DotNettyFramePool _pool;

        public Frame(DotNettyFramePool pool, int capacity)
            : base(UnpooledByteBufferAllocator.Default, RoundedUp(capacity), int.MaxValue)
        {
            _pool = pool;
            ArrayLength = Capacity;
        }

        // The capacity, readable once released too (DotNetty's Capacity refuses a buffer with a reference count of 0).
        public int ArrayLength { get; private set; }

        public void Reuse(int capacity)
        {
            SetReferenceCount(1);
            Clear();
            if (ArrayLength < capacity)
            {
                ArrayLength = RoundedUp(capacity);
                SetArray(new byte[ArrayLength]);
            }
        }

        // Released by its last holder: keep the array and go back to the pool instead of dropping it.
        protected override void Deallocate() => _pool.Return(this);
    }
}
