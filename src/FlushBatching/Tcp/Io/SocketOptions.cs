using System.Net.Sockets;

namespace FlushBatching.Tcp.Io;

/// <summary>
/// The options every new connection's socket gets, on either connection stack, decided once from
/// <see cref="ConnectionSettings"/>: Nagle's algorithm and keep-alive as configured, each buffer size only when one is
/// configured (0 keeps the operating system's, which tunes itself). The sockets stack sets them on its
/// <see cref="Socket"/> (<see cref="ApplyTo"/>), the DotNetty stack as channel options, field by field.
/// </summary>
internal readonly record struct SocketOptions(bool NoDelay, bool KeepAlive, int? SendBufferSize, int? ReceiveBufferSize)
{
    public static SocketOptions Of(ConnectionSettings settings) => new(
        settings.NoDelay,
        settings.KeepAlive,
        settings.SendBufferSize > 0 ? settings.SendBufferSize : null,
        settings.ReceiveBufferSize > 0 ? settings.ReceiveBufferSize : null);

    public void ApplyTo(Socket socket)
    {
        socket.NoDelay = NoDelay;
        socket.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.KeepAlive, KeepAlive);
        if (SendBufferSize is { } send)
        {
            socket.SendBufferSize = send;
        }

        if (ReceiveBufferSize is { } receive)
        {
            socket.ReceiveBufferSize = receive;
        }
    }
}
