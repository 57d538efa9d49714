using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using FlushBatching.Tcp;
using FlushBatching.Tests.Support;

namespace FlushBatching.Tests.Tcp;

public class ConnectorTests
{
    [Fact]
    public async Task Connecting_to_a_closed_port_fails_naming_the_endpoint()
    {
        var closed = RawPeer.ClosedEndPoint();

        var e = await Assert.ThrowsAsync<IOException>(() => FramedConnector.ConnectAsync(closed, ConnectionSettings.Default));
        Assert.Contains(closed.ToString(), e.Message);
        Assert.Equal(SocketError.ConnectionRefused, Assert.IsType<SocketException>(e.InnerException).SocketErrorCode);
    }

    [Fact]
    public async Task A_peer_that_never_answers_the_handshake_fails_within_the_connect_timeout_naming_the_key()
    {
        // The kernel completes TCP's handshake for a listening socket nobody accepts from, so only the
        // TLS handshake hangs, and the timeout must end it.
        using var silent = RawPeer.Listen();
        var settings = ConnectionSettings.Default.WithConnectTimeout(TimeSpan.FromMilliseconds(300)).WithTls(TlsSettings.ForClient());

        var e = await Assert.ThrowsAsync<TimeoutException>(() => FramedConnector.ConnectAsync((IPEndPoint)silent.LocalEndPoint!, settings));
        Assert.Contains("connection-timeout", e.Message);
        Assert.Contains("300ms", e.Message);

        // The connector gave up, so its socket is closed: the peer is not left holding a connection nobody will use.
        using var accepted = await silent.AcceptAsync();
        await RawPeer.ClosedByTheOtherEndWithin(accepted, Poll.Patience, "the other end to close the connection");
    }

    [Fact]
    public async Task A_callers_cancellation_ends_connecting_and_closes_the_socket()
    {
        using var silent = RawPeer.Listen();
        using var cancellation = new CancellationTokenSource();
        var connecting = FramedConnector.ConnectAsync((IPEndPoint)silent.LocalEndPoint!, ConnectionSettings.Default.WithTls(TlsSettings.ForClient()), cancellation.Token);
        using var accepted = await silent.AcceptAsync();
        await cancellation.CancelAsync();

        // The caller's own cancellation, not a time-out: connection-timeout (15 s) is far off.
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => connecting);
        await RawPeer.ClosedByTheOtherEndWithin(accepted, Poll.Patience, "the other end to close the connection");
    }

    [Fact]
    public async Task A_certificate_the_client_refuses_closes_its_socket()
    {
        using var certificate = new SelfSignedCertificate();
        using var serverCertificate = X509CertificateLoader.LoadPkcs12FromFile(certificate.PfxPath, SelfSignedCertificate.Password);
        using var listening = RawPeer.Listen();
        var connecting = FramedConnector.ConnectAsync((IPEndPoint)listening.LocalEndPoint!, ConnectionSettings.Default.WithTls(TlsSettings.ForClient()));
        using var accepted = await listening.AcceptAsync();
        await using (var tls = new SslStream(new NetworkStream(accepted, ownsSocket: false), leaveInnerStreamOpen: true))
        {
            var serving = tls.AuthenticateAsServerAsync(serverCertificate);
            var e = await Assert.ThrowsAsync<AuthenticationException>(() => connecting);
            Assert.Contains("TLS handshake", e.Message);

            // The server's side ends on the client's alert (or, under TLS 1.3, may have finished first): either way,
            // only what follows on the wire is this test's.
            await Record.ExceptionAsync(() => serving);
        }

        await RawPeer.ClosedByTheOtherEndWithin(accepted, Poll.Patience, "the other end to close the connection");
    }

    [Fact]
    public async Task Missing_arguments_are_refused_by_name()
    {
        var endpoint = new IPEndPoint(IPAddress.Loopback, 1);
        Assert.Equal("remote", (await Assert.ThrowsAsync<ArgumentNullException>(() => FramedConnector.ConnectAsync(null!, ConnectionSettings.Default))).ParamName);
        Assert.Equal("host", (await Assert.ThrowsAsync<ArgumentNullException>(() => FramedConnector.ConnectAsync(null!, 1, ConnectionSettings.Default))).ParamName);
        Assert.Equal("settings", (await Assert.ThrowsAsync<ArgumentNullException>(() => FramedConnector.ConnectAsync(endpoint, null!))).ParamName);
        Assert.Equal("settings", (await Assert.ThrowsAsync<ArgumentNullException>(() => FramedConnector.ConnectAsync("localhost", 1, null!))).ParamName);
    }

    [Fact]
    public async Task An_ipv4_endpoint_is_connected_from_an_ipv4_address()
    {
        // Not from a dual-mode IPv6 socket, whose local address would read ::ffff:127.0.0.1 in every log line.
        await using var loopback = Loopback.Listen();
        var (client, _) = await loopback.ConnectAsync();
        Assert.Equal(AddressFamily.InterNetwork, client.LocalEndPoint.AddressFamily);
        Assert.Equal(IPAddress.Loopback, client.LocalEndPoint.Address);
    }

    [Theory]
    [InlineData("times out")]
    [InlineData("refuses")]
    public async Task An_address_that_times_out_or_refuses_moves_on_to_the_next(string first)
    {
        // A listener nobody accepts from completes TCP's handshake, so only the TLS handshake hangs: the connect timeout's
        // TimeoutException, as from a black-holed address.
        using var silent = RawPeer.Listen();
        using var certificate = new SelfSignedCertificate();
        await using var serving = Support.Loopback.Listen(ConnectionSettings.Default.WithTls(TlsSettings.FromPfxFile(certificate.PfxPath, SelfSignedCertificate.Password)));
        var settings = ConnectionSettings.Default.WithConnectTimeout(TimeSpan.FromMilliseconds(300)).WithTls(TlsSettings.ForClient().WithSuppressValidation(true));
        var unanswered = first == "times out" ? (IPEndPoint)silent.LocalEndPoint! : RawPeer.ClosedEndPoint();

        await using var client = await FramedConnector.ConnectToFirstAsync([unanswered, serving.EndPoint], "localhost", settings, CancellationToken.None);

        Assert.Equal(serving.EndPoint.Port, client.RemoteEndPoint.Port);
    }

    [Fact]
    public async Task The_last_address_failure_is_what_connecting_throws()
    {
        using var silent = RawPeer.Listen();
        var settings = ConnectionSettings.Default.WithConnectTimeout(TimeSpan.FromMilliseconds(300)).WithTls(TlsSettings.ForClient());

        await Assert.ThrowsAsync<TimeoutException>(() => FramedConnector.ConnectToFirstAsync([RawPeer.ClosedEndPoint(), (IPEndPoint)silent.LocalEndPoint!], "localhost", settings, CancellationToken.None));
    }

    [Fact]
    public async Task Connecting_by_host_name_works()
    {
        await using var loopback = Support.Loopback.Listen();
        await using var client = await FramedConnector.ConnectAsync("localhost", loopback.EndPoint.Port, ConnectionSettings.Default);
        Assert.Equal(loopback.EndPoint.Port, client.RemoteEndPoint.Port);
    }
}
