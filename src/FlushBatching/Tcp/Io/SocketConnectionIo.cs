using System.Net.Sockets;
using System.Runtime.CompilerServices;

namespace FlushBatching.Tcp.Io;

/// <summary>Plain TCP: receives straight from the socket and sends each batch as one gathered send (writev).</summary>
internal sealed class SocketConnectionIo : ConnectionIo
{
    private readonly Socket _socket;
    private readonly SocketSender _sender = new();

    public SocketConnectionIo(Socket socket) => _socket = socket;

    public override ValueTask<int> ReceiveAsync(Memory<byte> buffer) => _socket.ReceiveAsync(buffer, SocketFlags.None);

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    public override async ValueTask SendAsync(List<ArraySegment<byte>> frames, long bytes)
    {
        var sent = await _sender.SendAsync(_socket, frames).ConfigureAwait(false);
        if (sent != bytes)
        {
            throw new IOException($"The socket took {sent} of {bytes} bytes in one send.");
        }
    }

    public override ValueTask ShutdownSendAsync()
    {
        _socket.Shutdown(SocketShutdown.Send);
        return ValueTask.CompletedTask;
    }

    public override void Dispose()
    {
        _socket.Dispose();
        _sender.Dispose();
    }
}
