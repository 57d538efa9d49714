using System.Net.Sockets;
using FlushBatching.Tcp;

namespace FlushBatching.Tests.Tcp;

public class SocketOptionsTests
{
    [Fact]
    public void Settings_reach_the_socket()
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        var settings = ConnectionSettings.Default.WithNoDelay(false).WithKeepAlive(false).WithSendBufferSize(64 * 1024).WithReceiveBufferSize(96 * 1024);
        SocketOptions.Of(settings).ApplyTo(socket);

        Assert.False(socket.NoDelay);
        Assert.Equal(0, (int)socket.GetSocketOption(SocketOptionLevel.Socket, SocketOptionName.KeepAlive)!);

        // Linux doubles what it is given, for its own bookkeeping; other systems keep it.
        Assert.InRange(socket.SendBufferSize, 64 * 1024, 2 * 64 * 1024);
        Assert.InRange(socket.ReceiveBufferSize, 96 * 1024, 2 * 96 * 1024);
    }

    [Fact]
    public void Defaults_turn_nagle_off_and_keep_alive_on()
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        SocketOptions.Of(ConnectionSettings.Default).ApplyTo(socket);
        Assert.True(socket.NoDelay);
        Assert.NotEqual(0, (int)socket.GetSocketOption(SocketOptionLevel.Socket, SocketOptionName.KeepAlive)!);
    }

    [Fact]
    public void A_buffer_size_of_zero_leaves_the_operating_systems_default()
    {
        using var plain = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        SocketOptions.Of(ConnectionSettings.Default.WithSendBufferSize(0).WithReceiveBufferSize(0)).ApplyTo(socket);
        Assert.Equal(plain.SendBufferSize, socket.SendBufferSize);
        Assert.Equal(plain.ReceiveBufferSize, socket.ReceiveBufferSize);
    }
}
