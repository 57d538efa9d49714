using System.Buffers;

namespace FlushBatching.Tcp.Loops;

/// <summary>
/// Where a connection's outbound frames live: pooled chunks of <see cref="ChunkSize"/> bytes that frames fill strictly
/// in write order, a frame larger than a chunk in a buffer of its own. Frames written one after another sit side by
/// side, so a batch is usually one segment; and since the chunks fill in order, a chunk is done with once the send
/// loop has sent past it, and goes back to the pool then. Few chunks are out at once, so the pool serves them from its
/// caches, where one buffer per frame would miss under load.
/// </summary>
/// <remarks>
/// Two owners, one side each: <see cref="Reserve"/> and <see cref="Seal"/> under the write queue's lock (the writers'
/// side), the rest by the send loop alone (the sent side). Every rent and return is counted on
/// <c>flushbatching.buffers.rented</c>.
/// </remarks>
/// <param name="settings">The connection's settings: its buffer pool and metrics.</param>
internal sealed class FrameChunks(ConnectionSettings settings)
{
    /// <summary>32 KiB: the size of a chunk; a larger frame gets a buffer of its own.</summary>
    internal const int ChunkSize = 32 * 1024;

    private readonly ArrayPool<byte> _pool = settings.BufferPool;

    // The writers' side: the chunk being filled, and how much of it is.
    private byte[]? _chunk;
    private int _chunkUsed;

    // The send loop's side: the chunk of the last frame sent, returned once a later chunk is reached.
    private byte[]? _sentChunk;

    /// <summary>Room for one frame of <paramref name="length"/> bytes, at the end of the current chunk or in a new buffer.</summary>
    public ArraySegment<byte> Reserve(int length)
    {
        if (_chunk is null || ChunkSize - _chunkUsed < length)
        {
            _chunk = _pool.Rent(Math.Max(length, ChunkSize));
            settings.Metrics.RecordBufferRented();
            _chunkUsed = 0;
        }

        var frame = new ArraySegment<byte>(_chunk, _chunkUsed, length);
        _chunkUsed = length > ChunkSize ? ChunkSize : _chunkUsed + length;
        return frame;
    }

    /// <summary>
    /// Writes from now on start a new chunk: the current one is all sent, or about to be, and the send loop returns it.
    /// For a send loop that parks with nothing queued, so that an idle connection holds no buffer.
    /// </summary>
    public void Seal() => _chunk = null;

    /// <summary>Send loop only: the frames in <paramref name="frames"/> (in write order) are done with.</summary>
    public void MovePast(List<ArraySegment<byte>> frames)
    {
        foreach (var frame in frames)
        {
            if (frame.Array is not null)
            {
                MovePast(frame.Array);
            }
        }
    }

    /// <summary>
    /// Send loop only: <paramref name="chunk"/> holds the next frame in write order; reaching a new chunk means the one
    /// before is done with, and it goes back to the pool.
    /// </summary>
    public void MovePast(byte[] chunk)
    {
        if (chunk != _sentChunk)
        {
            ReturnSent();
            _sentChunk = chunk;
        }
    }

    /// <summary>Send loop only: returns the chunk of the last frame sent, all of it sent by now.</summary>
    public void ReturnSent()
    {
        if (_sentChunk is not null)
        {
            _pool.Return(_sentChunk);
            settings.Metrics.RecordBufferReturned();
            _sentChunk = null;
        }
    }
}
