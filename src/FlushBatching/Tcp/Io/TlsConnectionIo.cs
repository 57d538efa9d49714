using System.Buffers;
using System.Net.Security;
using System.Net.Sockets;
using FlushBatching.Diagnostics;

namespace FlushBatching.Tcp.Io;

/// <summary>
/// TLS over a socket. A batch is copied into one pooled buffer and written once, so it becomes as few TLS
/// records, and syscalls, as its size allows, instead of one record per frame.
/// </summary>
internal sealed class TlsConnectionIo : ConnectionIo
{
    private readonly Socket _socket;
    private readonly SslStream _stream;
    private readonly ArrayPool<byte> _pool;
    private readonly FlushBatchingMetrics _metrics;

    public TlsConnectionIo(Socket socket, SslStream stream, ConnectionSettings settings)
    {
        _socket = socket;
        _stream = stream;
        _pool = settings.BufferPool;
        _metrics = settings.Metrics;
    }

    public override ValueTask<int> ReceiveAsync(Memory<byte> buffer) => _stream.ReadAsync(buffer);

    public override async ValueTask SendAsync(List<ArraySegment<byte>> frames, long bytes)
    {
        if (frames.Count == 1)
        {
            await _stream.WriteAsync(frames[0].AsMemory()).ConfigureAwait(false);
            return;
        }

        var buffer = _pool.Rent(checked((int)bytes));
        _metrics.RecordBufferRented();
        try
        {
            var offset = 0;
            foreach (var frame in frames)
            {
                frame.AsSpan().CopyTo(buffer.AsSpan(offset));
                offset += frame.Count;
            }

            await _stream.WriteAsync(buffer.AsMemory(0, offset)).ConfigureAwait(false);
        }
        finally
        {
            _pool.Return(buffer);
            _metrics.RecordBufferReturned();
        }
    }

    // Ends the TCP stream without TLS's close_notify, as stock Akka.Remote (DotNetty's TlsHandler) ends it. Sending it
    // would take SslStream.ShutdownAsync, whose SSL_shutdown also reads, outside the lock SslStream holds around its own
    // reads and writes; and the receive loop reads now, waiting for the peer's end. OpenSSL takes one call at a time on a
    // connection: the two together corrupted its memory and ended the process (libssl, .NET 10.0.12 with OpenSSL 3.0).
    // Nothing is lost by it: the peer reads every frame, then the end of the stream, and a frame cut short is an error.
    public override ValueTask ShutdownSendAsync()
    {
        _socket.Shutdown(SocketShutdown.Send);
        return ValueTask.CompletedTask;
    }

    public override void Dispose()
    {
        _stream.Dispose();
        _socket.Dispose();
    }
}
