using System.Net;
using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using FlushBatching.Batching;
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

        await Poll.Within(client.CloseAsync());
        Assert.Null(await atServer.WaitClosedAsync());
    }

    // OpenSSL takes one call at a time on a connection: SslStream locks its reads against its writes, but not against
    // ShutdownAsync, whose SSL_shutdown reads too. A close that sent TLS's close_notify while the receive loop decrypted
    // the peer's frames corrupted OpenSSL's memory and ended the process (a segmentation fault or glibc's abort), within a
    // thousand closes: this closes a thousand times while the peer sends, and the test host dies if the two meet.
    [Fact]
    public async Task A_graceful_close_while_the_peer_keeps_sending_ends_the_peer_cleanly_every_time()
    {
        // Unbatched, each frame is a TLS record of its own: the receive loop decrypts often.
        await using var loopback = Loopback.Listen(ServerSettings.WithBatching(BatchingSettings.Default.WithEnabled(false)));
        var clientSettings = ConnectionSettings.Default.WithTls(TlsSettings.ForClient().WithSuppressValidation(true));
        var frame = new byte[100];
        for (var round = 0; round < 1000; round++)
        {
            var (client, server) = await loopback.ConnectAsync(clientSettings);
            var atServer = new FrameCollector();
            var atClient = new FrameCollector();
            server.Start(atServer);
            client.Start(atClient);
            var sending = Task.Run(async () =>
            {
                while (!server.IsClosing)
                {
                    if (!server.TryWrite(frame))
                    {
                        await server.WhenWritableAsync();
                    }
                }
            });

            if (round % 2 == 1)
            {
                await atClient.WaitForCountAsync(round % 50);
            }

            await Poll.Within(client.CloseAsync());
            Assert.Null(await atServer.WaitClosedAsync());
            await Poll.Within(sending);
            await client.DisposeAsync();
            await server.DisposeAsync();
        }
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

    [LinuxFact(IsolatedStore.Reason)]
    public async Task A_certificate_found_in_the_store_by_thumbprint_serves_tls()
    {
        using var certificate = X509CertificateLoader.LoadPkcs12FromFile(_certificate.PfxPath, SelfSignedCertificate.Password, X509KeyStorageFlags.Exportable | X509KeyStorageFlags.PersistKeySet);
        IsolatedStore.Require();
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
        Assert.Equal("certificate.thumbprint", missing.Key);
    }

    [Fact]
    public void A_pfx_file_that_is_missing_or_has_another_password_is_refused_naming_the_key()
    {
        var missing = Assert.Throws<InvalidSettingException>(() => TlsSettings.FromPfxFile("/nonexistent/node.pfx", "x"));
        Assert.Equal("certificate.path", missing.Key);
        var wrongPassword = Assert.Throws<InvalidSettingException>(() => TlsSettings.FromPfxFile(_certificate.PfxPath, "wrong"));
        Assert.Equal(_certificate.PfxPath, wrongPassword.Value);
    }

    [LinuxFact(IsolatedStore.Reason)]
    public async Task With_mutual_authentication_a_listener_refuses_a_client_without_a_certificate_saying_why()
    {
        using var authority = new TestCertificateAuthority(trusted: true);
        var server = ConnectionSettings.Default.WithTls(NodeTls(authority.IssueForLoopback()).WithRequireMutualAuthentication(true));
        await using var loopback = Loopback.Listen(server);

        var rejected = await RejectedWhenConnecting(loopback, TlsSettings.ForClient().WithValidateHostname(false));

        Assert.Contains("presented no certificate", rejected.Message);
    }

    [LinuxFact(IsolatedStore.Reason)]
    public async Task With_mutual_authentication_both_sides_present_trusted_certificates_and_frames_flow()
    {
        using var authority = new TestCertificateAuthority(trusted: true);
        var mutual = ConnectionSettings.Default.WithTls(NodeTls(authority.IssueForLoopback()).WithRequireMutualAuthentication(true));
        await using var loopback = Loopback.Listen(mutual);
        var (client, server) = await loopback.ConnectAsync(mutual);
        var received = new FrameCollector();
        server.Start(received);
        client.TryWrite([7]);
        await received.WaitForCountAsync(1);
        Assert.Empty(loopback.Rejected);
    }

    [LinuxFact(IsolatedStore.Reason)]
    public async Task A_client_certificate_from_an_untrusted_authority_is_refused_by_a_mutual_listener_saying_why()
    {
        using var trusted = new TestCertificateAuthority(trusted: true);
        using var untrusted = new TestCertificateAuthority(trusted: false);
        await using var loopback = Loopback.Listen(ConnectionSettings.Default.WithTls(NodeTls(trusted.IssueForLoopback()).WithRequireMutualAuthentication(true)));

        var rejected = await RejectedWhenConnecting(loopback, NodeTls(untrusted.IssueForLoopback()).WithRequireMutualAuthentication(true));

        Assert.Contains("chain does not validate", rejected.Message);
        Assert.Contains("PartialChain", rejected.Message);
    }

    [LinuxTheory(IsolatedStore.Reason)]
    [InlineData(true)]
    [InlineData(false)]
    public async Task Hostname_validation_refuses_a_server_certificate_for_another_name_only_when_on(bool validateHostname)
    {
        using var authority = new TestCertificateAuthority(trusted: true);
        await using var loopback = Loopback.Listen(ConnectionSettings.Default.WithTls(NodeTls(authority.Issue("elsewhere.example"))));
        var client = ConnectionSettings.Default.WithTls(TlsSettings.ForClient().WithValidateHostname(validateHostname));

        if (validateHostname)
        {
            var e = await Assert.ThrowsAsync<AuthenticationException>(() => FramedConnector.ConnectAsync(loopback.EndPoint, client));
            Assert.Contains("elsewhere.example", e.Message);
            Assert.Contains("do not match", e.Message);
        }
        else
        {
            // Accepted, and carrying frames: the handshake not only completed but left a working connection.
            await using var connection = await FramedConnector.ConnectAsync(loopback.EndPoint, client);
            var server = await loopback.AcceptAsync();
            var received = new FrameCollector();
            server.Start(received);
            Assert.True(connection.TryWrite([1, 2, 3]));
            await received.WaitForCountAsync(1);
            Assert.Equal([1, 2, 3], received.Frames.Single());
        }
    }

    [Fact]
    public async Task A_certificate_validator_decides_alone_and_is_shown_the_peer()
    {
        using var untrusted = new TestCertificateAuthority(trusted: false);
        await using var loopback = Loopback.Listen(ConnectionSettings.Default.WithTls(NodeTls(untrusted.IssueForLoopback())));
        var seen = new List<(string? Subject, SslPolicyErrors Errors, string Peer)>();
        var accepting = TlsSettings.ForClient().WithCertificateValidator((certificate, _, errors, peer) =>
        {
            seen.Add((certificate?.Subject, errors, peer));
            return true;
        });

        await using (await FramedConnector.ConnectAsync(loopback.EndPoint, ConnectionSettings.Default.WithTls(accepting)))
        {
        }

        var (subject, errors, peer) = Assert.Single(seen);
        Assert.Equal("CN=localhost", subject);
        Assert.True(errors.HasFlag(SslPolicyErrors.RemoteCertificateChainErrors));
        Assert.Equal(loopback.EndPoint.ToString(), peer);

        var refusing = TlsSettings.ForClient().WithSuppressValidation(true).WithCertificateValidator((_, _, _, _) => false);
        var e = await Assert.ThrowsAsync<AuthenticationException>(() => FramedConnector.ConnectAsync(loopback.EndPoint, ConnectionSettings.Default.WithTls(refusing)));
        Assert.Contains("validator refused", e.Message);
    }

    [Fact]
    public void A_certificate_without_a_private_key_is_refused_at_once()
    {
        using var authority = new TestCertificateAuthority(trusted: false);
        var publicOnly = authority.WithoutPrivateKey(authority.IssueForLoopback());

        var e = Assert.Throws<InvalidSettingException>(() => TlsSettings.FromPfxFile(publicOnly, TestCertificateAuthority.Password));
        Assert.Equal("certificate.path", e.Key);
        Assert.Contains("no private key", e.Message);
        using var certificate = X509CertificateLoader.LoadPkcs12FromFile(publicOnly, TestCertificateAuthority.Password);
        Assert.Throws<ArgumentException>(() => TlsSettings.FromCertificate(certificate));
    }

    [Fact]
    public void A_pfx_file_the_platform_cannot_load_with_its_flags_is_refused_naming_the_key_and_the_flags()
    {
        // As macOS's loader refuses EphemeralKeySet: a PlatformNotSupportedException that escaped the settings before.
        var e = Assert.Throws<InvalidSettingException>(() => TlsSettings.FromPfxFile(_certificate.PfxPath, SelfSignedCertificate.Password, X509KeyStorageFlags.EphemeralKeySet,
            static (_, _, _) => throw new PlatformNotSupportedException("The ephemeral key set is not supported on this platform."), keyNeedsContainer: false));
        Assert.Equal("certificate.path", e.Key);
        Assert.Contains("EphemeralKeySet", e.Message);
        Assert.IsType<PlatformNotSupportedException>(e.InnerException);
    }

    [Fact]
    public async Task Where_schannel_needs_it_a_certificate_whose_key_lives_in_memory_is_re_imported_and_serves_tls()
    {
        // A key made in memory, as CopyWithPrivateKey makes it: on Windows, SChannel cannot use it, and every handshake
        // failed. Re-imported (as this platform is told Windows does it), it is another certificate with the same
        // thumbprint and a key, and it serves.
        using var loaded = X509CertificateLoader.LoadPkcs12FromFile(_certificate.PfxPath, SelfSignedCertificate.Password);
        using var key = loaded.GetRSAPrivateKey()!;
        using var publicOnly = X509CertificateLoader.LoadCertificate(loaded.RawData);
        using var inMemory = publicOnly.CopyWithPrivateKey(key);

        var tls = TlsSettings.FromCertificate(inMemory, needsContainer: _ => true, Import, warn: null);

        Assert.NotSame(inMemory, tls.Certificate);
        Assert.Equal(inMemory.Thumbprint, tls.Certificate!.Thumbprint);
        Assert.True(tls.Certificate.HasPrivateKey);
        Assert.Same(inMemory, TlsSettings.FromCertificate(inMemory, needsContainer: _ => false, _ => throw new InvalidOperationException("imported a key that needs no container"), warn: null).Certificate);
        await using (var loopback = Loopback.Listen(ConnectionSettings.Default.WithTls(tls)))
        {
            var (client, _) = await loopback.ConnectAsync(ConnectionSettings.Default.WithTls(TlsSettings.ForClient().WithSuppressValidation(true)));
            Assert.True(client.TryWrite([1, 2, 3]));
        }

        // What the settings imported is theirs to release (its key container, on Windows); the certificate given is not.
        var imported = tls.Certificate;
        tls.ReleaseOwned();
        Assert.Equal(IntPtr.Zero, imported.Handle);
        Assert.NotEqual(IntPtr.Zero, inMemory.Handle);
    }

    [Fact]
    public void An_import_that_fails_leaves_the_certificate_as_given_with_one_warning_naming_why()
    {
        // A service account with no loaded profile has no key set to import into: stock starts with the certificate as
        // it is, and so does this, saying why handshakes may fail.
        using var loaded = X509CertificateLoader.LoadPkcs12FromFile(_certificate.PfxPath, SelfSignedCertificate.Password);
        var warnings = new List<string>();

        var tls = TlsSettings.FromCertificate(loaded, needsContainer: _ => true, _ => throw new CryptographicException("The profile for the user is a temporary profile."), warnings.Add);

        Assert.Same(loaded, tls.Certificate);
        var warning = Assert.Single(warnings);
        Assert.Contains("temporary profile", warning);
        Assert.Contains(loaded.Thumbprint, warning);
        tls.ReleaseOwned();
        Assert.NotEqual(IntPtr.Zero, loaded.Handle);
    }

    private static X509Certificate2 Import(byte[] pkcs12) => X509CertificateLoader.LoadPkcs12(pkcs12, password: null);

    [Fact]
    public void Where_schannel_needs_it_a_pfx_file_is_loaded_without_an_ephemeral_key_whatever_the_flags_say()
    {
        var asked = new List<X509KeyStorageFlags>();
        X509Certificate2 Load(string path, string? password, X509KeyStorageFlags flags)
        {
            asked.Add(flags);
            return X509CertificateLoader.LoadPkcs12FromFile(path, password);
        }

        const X509KeyStorageFlags flags = X509KeyStorageFlags.EphemeralKeySet | X509KeyStorageFlags.Exportable;
        using (TlsSettings.FromPfxFile(_certificate.PfxPath, SelfSignedCertificate.Password, flags, Load, keyNeedsContainer: true).Certificate)
        using (TlsSettings.FromPfxFile(_certificate.PfxPath, SelfSignedCertificate.Password, flags, Load, keyNeedsContainer: false).Certificate)
        {
            Assert.Equal([X509KeyStorageFlags.Exportable, flags], asked);
        }
    }

    [Fact]
    public void Where_tls_has_no_tls_1_3_as_on_macos_tls_1_3_alone_is_refused_naming_the_platform()
    {
        var refused = Assert.Throws<PlatformNotSupportedException>(() => TlsSettings.ForClient().WithProtocols(SslProtocols.Tls13, tls13Available: false));
        Assert.Contains("macOS has no TLS 1.3", refused.Message);
        Assert.Contains(System.Runtime.InteropServices.RuntimeInformation.OSDescription, refused.Message);

        // TLS 1.2 beside it serves there; where TLS 1.3 is, it alone is taken.
        Assert.Equal(SslProtocols.Tls12 | SslProtocols.Tls13, TlsSettings.ForClient().WithProtocols(SslProtocols.Tls12 | SslProtocols.Tls13, tls13Available: false).Protocols);
        Assert.Equal(SslProtocols.Tls13, TlsSettings.ForClient().WithProtocols(SslProtocols.Tls13, tls13Available: true).Protocols);
    }

    [Fact]
    public void Mutual_authentication_needs_a_certificate_to_present()
    {
        Assert.Throws<ArgumentException>(() => TlsSettings.ForClient().WithRequireMutualAuthentication(true));
        Assert.False(TlsSettings.ForClient().RequireMutualAuthentication);
        Assert.True(TlsSettings.ForClient().ValidateHostname);
    }

    private static TlsSettings NodeTls(string pfxPath) => TlsSettings.FromPfxFile(pfxPath, TestCertificateAuthority.Password);

    // Under TLS 1.3 a client may finish its side before the server refuses its certificate, so the client may or may not
    // see the refusal; the tests check the listener's side, where no connection is accepted.
    // Connects as a client the listener will refuse, and returns the listener's reason. The client's own handshake may
    // succeed (under TLS 1.3 the server judges the client's certificate after the client has finished): the client
    // stays open until the listener has rejected it, so the reason is the listener's verdict, not the client's close.
    private static async Task<Exception> RejectedWhenConnecting(Loopback loopback, TlsSettings client)
    {
        FramedConnection? connection = null;
        try
        {
            connection = await FramedConnector.ConnectAsync(loopback.EndPoint, ConnectionSettings.Default.WithTls(client));
        }
        catch (Exception e) when (e is AuthenticationException or IOException)
        {
        }

        var rejected = await loopback.WaitRejectedAsync();
        if (connection is not null)
        {
            await connection.DisposeAsync();
        }

        return rejected;
    }
}
