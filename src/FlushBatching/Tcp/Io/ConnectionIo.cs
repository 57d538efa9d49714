namespace FlushBatching.Tcp.Io;

/// <summary>
/// The byte transport under a <see cref="FramedConnection"/>: a plain socket, or a TLS stream over one.
/// The receive loop alone calls <see cref="ReceiveAsync"/>; the send loop alone calls the send methods.
/// </summary>
internal abstract class ConnectionIo : IDisposable
{
    /// <summary>Reads into <paramref name="buffer"/>; 0 means the peer closed its side.</summary>
    public abstract ValueTask<int> ReceiveAsync(Memory<byte> buffer);

    /// <summary>Sends every frame of <paramref name="frames"/> (<paramref name="bytes"/> in all) in one gathered send.</summary>
    public abstract ValueTask SendAsync(List<ArraySegment<byte>> frames, long bytes);

    /// <summary>Ends our side of the stream after everything sent, so the peer reads all of it, then the end.</summary>
    public abstract ValueTask ShutdownSendAsync();

    /// <summary>Closes the transport; pending operations end with an error.</summary>
    public abstract void Dispose();
}
