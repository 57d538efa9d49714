using System.Net;
using System.Net.Sockets;
using FlushBatching.Tcp;

namespace FlushBatching.Tests.Tcp;

public class ConnectorTests
{
    [Fact]
    public async Task Connecting_to_a_closed_port_fails_naming_the_endpoint()
    {
        IPEndPoint closed;
        using (var probe = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp))
        {
            probe.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            closed = (IPEndPoint)probe.LocalEndPoint!;
        }

        var e = await Assert.ThrowsAsync<IOException>(() => FramedConnector.ConnectAsync(closed, ConnectionSettings.Default));
        Assert.Contains(closed.ToString(), e.Message);
        Assert.Equal(SocketError.ConnectionRefused, Assert.IsType<SocketException>(e.InnerException).SocketErrorCode);
    }

    [Fact]
    public async Task A_peer_that_never_answers_the_handshake_fails_within_the_connect_timeout_naming_the_key()
    {
        // The kernel completes TCP's handshake for a listening socket nobody accepts from, so only the
        // TLS handshake hangs, and the timeout must end it.
        using var silent = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        silent.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        silent.Listen(1);
        var settings = ConnectionSettings.Default.WithConnectTimeout(TimeSpan.FromMilliseconds(300)).WithTls(TlsSettings.ForClient());

        var e = await Assert.ThrowsAsync<TimeoutException>(() => FramedConnector.ConnectAsync((IPEndPoint)silent.LocalEndPoint!, settings));
        Assert.Contains("connection-timeout", e.Message);
        Assert.Contains("300ms", e.Message);
    }

    [Fact]
    public async Task Connecting_by_host_name_works()
    {
        await using var loopback = Support.Loopback.Listen();
        await using var client = await FramedConnector.ConnectAsync("localhost", loopback.EndPoint.Port, ConnectionSettings.Default);
        Assert.Equal(loopback.EndPoint.Port, client.RemoteEndPoint.Port);
    }
}
