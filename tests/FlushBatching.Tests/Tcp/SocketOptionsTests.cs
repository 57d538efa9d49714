using System.Net.Sockets;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Io;
using FlushBatching.Tests.Support;

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

    [LinuxFact("reads socket options as the kernel reports them (ss)")]
    public async Task The_connectors_and_the_listeners_sockets_both_get_them()
    {
        // Read back from the kernel: what the connector and the listener gave their sockets, not what they meant to.
        var settings = ConnectionSettings.Default.WithKeepAlive(false).WithSendBufferSize(64 * 1024).WithReceiveBufferSize(96 * 1024);
        await using var loopback = Loopback.Listen(settings);
        await loopback.ConnectAsync(settings);

        var ends = KernelSocketOptions.Established(loopback.EndPoint.Port);
        Assert.Equal(2, ends.Count);
        Assert.All(ends, end => Assert.Equal(new KernelSocketOptions(end.LocalPort, 2 * 96 * 1024, 2 * 64 * 1024, KeepAlive: false), end));
    }
}
