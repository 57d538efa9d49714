using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using FlushBatching.Tcp;
using FlushBatching.Tests.Support;

namespace FlushBatching.Tests.Tcp;

public sealed class TlsTests : IDisposable
{
    private readonly SelfSignedCertificate _certificate = new();

    private ConnectionSettings ServerSettings => ConnectionSettings.Default.WithTls(TlsSettings.FromPfxFile(_certificate.PfxPath, SelfSignedCertificate.Password));

    public void Dispose() => _certificate.Dispose();

    [Fact]
    public async Task Frames_flow_both_ways_over_tls_in_batches()
    {
        await using var loopback = Loopback.Listen(ServerSettings);
        var (client, server) = await loopback.ConnectAsync(ConnectionSettings.Default.WithTls(TlsSettings.ForClient().WithSuppressValidation(true)));
        var atServer = new FrameCollector();
        var atClient = new FrameCollector();
        server.Start(atServer);
        client.Start(atClient);

        var frames = Enumerable.Range(0, 2000).Select(i => Enumerable.Repeat((byte)i, i % 300).ToArray()).ToList();
        foreach (var frame in frames)
        {
            Assert.True(client.TryWrite(frame));
            Assert.True(server.TryWrite(frame));
        }

        await atServer.WaitForCountAsync(frames.Count);
        await atClient.WaitForCountAsync(frames.Count);
        Assert.Equal(frames, atServer.Frames);
        Assert.Equal(frames, atClient.Frames);

        await client.CloseAsync().WaitAsync(FrameCollector.Patience);
        Assert.Null(await atServer.WaitClosedAsync());
    }

    [Fact]
    public async Task A_client_that_validates_rejects_a_self_signed_certificate_with_a_clear_error()
    {
        await using var loopback = Loopback.Listen(ServerSettings);
        var e = await Assert.ThrowsAsync<AuthenticationException>(() =>
            FramedConnector.ConnectAsync(loopback.EndPoint, ConnectionSettings.Default.WithTls(TlsSettings.ForClient())));
        Assert.Contains(loopback.EndPoint.ToString(), e.Message);
        Assert.Contains("TLS handshake", e.Message);
        Assert.Contains("certificate", e.Message, StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public async Task A_certificate_found_in_the_store_by_thumbprint_serves_tls()
    {
        using var certificate = X509CertificateLoader.LoadPkcs12FromFile(_certificate.PfxPath, SelfSignedCertificate.Password, X509KeyStorageFlags.Exportable | X509KeyStorageFlags.PersistKeySet);
        using var store = new X509Store(StoreName.My, StoreLocation.CurrentUser);
        store.Open(OpenFlags.ReadWrite);
        store.Add(certificate);
        try
        {
            var settings = ConnectionSettings.Default.WithTls(TlsSettings.FromStore(StoreName.My, StoreLocation.CurrentUser, certificate.Thumbprint));
            await using var loopback = Loopback.Listen(settings);
            var (client, server) = await loopback.ConnectAsync(ConnectionSettings.Default.WithTls(TlsSettings.ForClient().WithSuppressValidation(true)));
            var received = new FrameCollector();
            server.Start(received);
            client.TryWrite([1, 2, 3]);
            await received.WaitForCountAsync(1);
        }
        finally
        {
            store.Remove(certificate);
        }

        var missing = Assert.Throws<InvalidSettingException>(() => TlsSettings.FromStore(StoreName.My, StoreLocation.CurrentUser, "00" + certificate.Thumbprint[2..]));
        Assert.Equal("ssl.certificate.thumbprint", missing.Key);
    }

    [Fact]
    public void A_pfx_file_that_is_missing_or_has_another_password_is_refused_naming_the_key()
    {
        var missing = Assert.Throws<InvalidSettingException>(() => TlsSettings.FromPfxFile("/nonexistent/node.pfx", "x"));
        Assert.Equal("ssl.certificate.path", missing.Key);
        var wrongPassword = Assert.Throws<InvalidSettingException>(() => TlsSettings.FromPfxFile(_certificate.PfxPath, "wrong"));
        Assert.Equal(_certificate.PfxPath, wrongPassword.Value);
    }
}
