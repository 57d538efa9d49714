using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using FlushBatching.Tcp;
using FlushBatching.Tests.Support;

namespace FlushBatching.Tests.Tcp;

/// <summary>
/// What a listener does with sockets that do not become connections: each is closed, so the peer is not left holding
/// it, and reported; and what its stop promises: no more accepting, nothing announced after it.
/// </summary>
public sealed class ListenerTests : IDisposable
{
    // The first bytes of a TLS record carrying a ClientHello: enough for the server to start its handshake and wait.
    private static readonly byte[] HelloStart = [0x16, 0x03, 0x01];

    private readonly SelfSignedCertificate _certificate = new();
    private readonly ConcurrentQueue<Exception> _rejected = new();
    private readonly ConcurrentQueue<FramedConnection> _announced = new();

    public void Dispose() => _certificate.Dispose();

    [Fact]
    public void Missing_arguments_and_a_tls_listener_without_a_certificate_are_refused_by_name()
    {
        var endpoint = new IPEndPoint(IPAddress.Loopback, 0);
        Assert.Equal("endpoint", Assert.Throws<ArgumentNullException>(() => FramedListener.Start(null!, ConnectionSettings.Default, _ => { })).ParamName);
        Assert.Equal("settings", Assert.Throws<ArgumentNullException>(() => FramedListener.Start(endpoint, null!, _ => { })).ParamName);
        Assert.Equal("onConnection", Assert.Throws<ArgumentNullException>(() => FramedListener.Start(endpoint, ConnectionSettings.Default, null!)).ParamName);

        var e = Assert.Throws<ArgumentException>(() => FramedListener.Start(endpoint, ConnectionSettings.Default.WithTls(TlsSettings.ForClient()), _ => { }));
        Assert.Equal("settings", e.ParamName);
        Assert.Contains("TlsSettings.Certificate", e.Message);
    }

    [Fact]
    public async Task Listening_on_the_ipv6_any_address_serves_ipv4_and_ipv6_peers_each_known_by_its_own_address_as_a_dotnetty_listener_does()
    {
        // hostname = "::" in Akka's section: stock's DotNetty listener takes both families there; .NET's own IPv6 socket
        // took IPv6 alone, and an IPv4 peer was refused.
        await using var listener = FramedListener.Start(new IPEndPoint(IPAddress.IPv6Any, 0), ConnectionSettings.Default, _announced.Enqueue);

        await using var overIpv4 = await FramedConnector.ConnectAsync(new IPEndPoint(IPAddress.Loopback, listener.LocalEndPoint.Port), ConnectionSettings.Default);
        await using var overIpv6 = await FramedConnector.ConnectAsync(new IPEndPoint(IPAddress.IPv6Loopback, listener.LocalEndPoint.Port), ConnectionSettings.Default);
        await Poll.Until(() => _announced.Count == 2, "both connections to be accepted");

        // Each peer is known by the address it has, as on the DotNetty stack: the IPv4 one as 127.0.0.1, not as
        // ::ffff:127.0.0.1, in the connection's ends and so in log lines, metric tags and its Akka address.
        var peers = _announced.Select(connection => connection.RemoteEndPoint.Address).ToList();
        Assert.Contains(IPAddress.Loopback, peers);
        Assert.Contains(IPAddress.IPv6Loopback, peers);
        var ipv4 = _announced.Single(connection => connection.RemoteEndPoint.Address.Equals(IPAddress.Loopback));
        Assert.Equal(IPAddress.Loopback, ipv4.LocalEndPoint.Address);
        Assert.Equal(overIpv4.LocalEndPoint, ipv4.RemoteEndPoint);
    }

    [Fact]
    public async Task A_port_in_use_is_refused_with_the_systems_reason()
    {
        await using var first = Start(ConnectionSettings.Default);
        var e = Assert.Throws<SocketException>(() => FramedListener.Start(first.LocalEndPoint, ConnectionSettings.Default, _ => { }));
        Assert.Equal(SocketError.AddressAlreadyInUse, e.SocketErrorCode);
    }

    [Fact]
    public async Task After_its_stop_the_port_refuses_connections_and_a_second_stop_does_nothing()
    {
        var listener = Start(ConnectionSettings.Default);
        await listener.DisposeAsync();
        await listener.DisposeAsync();

        var e = await Assert.ThrowsAsync<SocketException>(() => RawPeer.ConnectAsync(listener.LocalEndPoint));
        Assert.Equal(SocketError.ConnectionRefused, e.SocketErrorCode);
    }

    [Fact]
    public async Task A_client_silent_in_its_tls_handshake_is_closed_after_the_connect_timeout_and_reported_naming_the_key()
    {
        await using var listener = Start(WithTls(TimeSpan.FromMilliseconds(300)));
        using var client = await RawPeer.ConnectAsync(listener.LocalEndPoint);

        await RawPeer.ClosedByTheOtherEndWithin(client, Poll.Patience, "the other end to close the connection");
        await Poll.Until(() => !_rejected.IsEmpty, "the set-up reported");
        var e = Assert.IsType<TimeoutException>(Assert.Single(_rejected));
        Assert.Contains($"to {listener.LocalEndPoint}", e.Message);
        Assert.Contains("connection-timeout", e.Message);
        Assert.Contains("300ms", e.Message);
        Assert.Empty(_announced);
    }

    [Fact]
    public async Task A_client_that_sends_no_tls_to_a_tls_listener_is_closed_and_reported()
    {
        await using var listener = Start(WithTls(TimeSpan.FromSeconds(30)));
        using var client = await RawPeer.ConnectAsync(listener.LocalEndPoint);
        await client.SendAsync("GET / HTTP/1.1\r\n\r\n"u8.ToArray());

        await RawPeer.ClosedByTheOtherEndWithin(client, Poll.Patience, "the other end to close the connection");
        await Poll.Until(() => !_rejected.IsEmpty, "the set-up reported");
        var e = Assert.IsType<IOException>(Assert.Single(_rejected));
        Assert.Contains("dropped while setting up", e.Message);
        Assert.Contains(listener.LocalEndPoint.ToString(), e.Message);
        Assert.Empty(_announced);
    }

    [Fact]
    public async Task A_connection_its_owner_throws_on_is_closed_and_reported_with_the_owners_reason()
    {
        await using var listener = FramedListener.Start(new IPEndPoint(IPAddress.Loopback, 0), ConnectionSettings.Default,
            _ => throw new InvalidOperationException("the owner is full"), _rejected.Enqueue);

        // The listener resets the connection at once, which can fail this side's connect before it completes.
        await RawPeer.ConnectAndAwaitCloseAsync(listener.LocalEndPoint, Poll.Patience, "the other end to close the connection");
        await Poll.Until(() => !_rejected.IsEmpty, "the set-up reported");
        var e = Assert.IsType<IOException>(Assert.Single(_rejected));
        Assert.Contains("the owner is full", e.Message);
        Assert.IsType<InvalidOperationException>(e.InnerException);
    }

    [Fact]
    public async Task A_stop_during_a_tls_handshake_waits_for_that_set_up_to_end_and_announces_nothing_after_it()
    {
        var listener = Start(WithTls(TimeSpan.FromSeconds(30)));

        // One set-up that ended before the stop, so the stop's wait cannot pass on a count that was already zero.
        await using (var first = await FramedConnector.ConnectAsync(listener.LocalEndPoint, ConnectionSettings.Default.WithTls(TlsSettings.ForClient().WithSuppressValidation(true))))
        {
            await Poll.Until(() => _announced.Count == 1 && listener.SettingUp == 0, "the first connection announced");
        }

        using var client = await RawPeer.ConnectAsync(listener.LocalEndPoint);
        await client.SendAsync(HelloStart);
        await Poll.Until(() => listener.SettingUp == 1, "the second handshake under way");

        await Poll.Within(listener.DisposeAsync().AsTask());

        // Ended before the stop returned: reported as dropped by the stop (not as a time-out), not announced, and closed.
        Assert.Equal(0, listener.SettingUp);
        Assert.Contains("dropped while setting up", Assert.IsType<IOException>(Assert.Single(_rejected)).Message);
        Assert.Single(_announced);
        await RawPeer.ClosedByTheOtherEndWithin(client, Poll.Patience, "the other end to close the connection");
        await _announced.Single().DisposeAsync();
    }

    private FramedListener Start(ConnectionSettings settings) =>
        FramedListener.Start(new IPEndPoint(IPAddress.Loopback, 0), settings, _announced.Enqueue, _rejected.Enqueue);

    private ConnectionSettings WithTls(TimeSpan connectTimeout) => ConnectionSettings.Default.WithConnectTimeout(connectTimeout)
        .WithTls(TlsSettings.FromPfxFile(_certificate.PfxPath, SelfSignedCertificate.Password));
}
