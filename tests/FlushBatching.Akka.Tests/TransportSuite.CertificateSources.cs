#if AKKA_1_5_75
using System.Diagnostics;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using Akka.Actor;
using Akka.IO;
using Akka.Remote.Transport.DotNetty;
using FlushBatching.Akka.Tests.Support;
using FlushBatching.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// The certificate sources of Akka.NET 1.5.75, as stock takes them: a folder, a common name in a store, and
/// <c>DotNettySslSetup.FromSource</c>; each serves stock peers both ways, and a renewed certificate serves the next
/// connection, on either side, with no restart.
/// </summary>
public abstract partial class TransportSuite
{
    // Stock looks again at most every 10 s; a connection made up to 12 s after the renewed file is written gets it.
    private static readonly TimeSpan RenewedWithin = TimeSpan.FromSeconds(12);

    public static TheoryData<string> CertificateSources => ["folder", "common-name", "setup-from-source"];

    [LinuxTheory(IsolatedStore.Reason)]
    [MemberData(nameof(CertificateSources))]
    public async Task A_node_whose_certificate_comes_from_a_source_carries_messages_with_stock_both_ways(string source)
    {
        using var authority = new TestCertificateAuthority(trusted: true);
        using var folder = new CertificateFolder();
        using var store = new StoredCertificates();
        await using var node = StartWithSource(source, authority, folder, store);
        await using var stockServer = Nodes.Start("stock-server", Node.Stock, Tls(authority.IssueForLoopback()));
        await using var stockClient = Nodes.Start("stock-client", Node.Stock, Tls(authority.IssueForLoopback()));
        stockServer.System.ActorOf(Props.Create<Echo>(), "echo");
        node.System.ActorOf(Props.Create<Echo>(), "echo");

        var outward = await stockServer.Resolve(node, "echo");
        var inward = await node.Resolve(stockClient, "echo");

        Assert.Equal("out", await outward.Ask<string>("out", AskTimeout));
        Assert.Equal("in", await inward.Ask<string>("in", AskTimeout));
    }

    [LinuxFact(IsolatedStore.Reason)]
    public async Task A_renewed_certificate_written_beside_the_old_one_serves_the_next_connection_on_both_sides_within_12_seconds()
    {
        using var authority = new TestCertificateAuthority(trusted: true);
        using var folder = new CertificateFolder();
        var first = folder.Add(authority.IssueForLoopback());
        await using var node = Nodes.Start("renewing", TransportClass, Tls(folder.Path));
        using var before = new TlsPeerServer(authority.IssueForLoopback());
        using var after = new TlsPeerServer(authority.IssueForLoopback());
        using var client = X509CertificateLoader.LoadPkcs12FromFile(authority.IssueForLoopback(), TestCertificateAuthority.Password);

        Assert.Equal(first, await TlsProbe.ServerCertificateOf(node, client));
        Assert.Equal(first, await before.ClientCertificateOf(node));

        var renewed = folder.Add(authority.Issue("localhost", IPAddress.Loopback, issuedAt: DateTimeOffset.UtcNow.AddMinutes(-30)));
        var written = Stopwatch.StartNew();
        string? served;
        do
        {
            await Task.Delay(500);
            served = await TlsProbe.ServerCertificateOf(node, client);
        }
        while (served != renewed && written.Elapsed < RenewedWithin);

        Assert.True(served == renewed, $"a new connection {written.Elapsed.TotalSeconds:0.0} s after the renewed certificate was written still got {served}, not {renewed}");
        Assert.Equal(renewed, await after.ClientCertificateOf(node));
    }

    private Node StartWithSource(string source, TestCertificateAuthority authority, CertificateFolder folder, StoredCertificates store)
    {
        var file = authority.Issue($"node-{Guid.NewGuid():N}", IPAddress.Loopback);
        switch (source)
        {
            case "folder":
                folder.Add(file);
                return Nodes.Start("from-folder", TransportClass, Tls(folder.Path));
            case "common-name":
                var commonName = store.Add(file);
                return Nodes.Start("from-store", TransportClass, $$"""
                    enable-ssl = on
                    ssl.certificate { common-name = "{{commonName}}", store-name = My, store-location = current-user }
                    """);
            default:
                folder.Add(file);
                var setup = DotNettySslSetup.FromSource(TlsCertificateSource.FromFolder(folder.Path, TestCertificateAuthority.Password),
                    suppressValidation: false, requireMutualAuthentication: true, validateCertificateHostname: false, customValidator: null);
                return Nodes.Start("from-setup", TransportClass, [setup], "enable-ssl = on");
        }
    }

    /// <summary>A folder of PFX files of the test's own, deleted with everything in it.</summary>
    private sealed class CertificateFolder : IDisposable
    {
        public string Path { get; } = Directory.CreateTempSubdirectory("flushbatching-certificates-").FullName;

        /// <summary>Copies the PFX file in, and returns its certificate's thumbprint.</summary>
        public string Add(string pfxPath)
        {
            File.Copy(pfxPath, System.IO.Path.Combine(Path, System.IO.Path.GetFileName(pfxPath)));
            using var certificate = X509CertificateLoader.LoadPkcs12FromFile(pfxPath, TestCertificateAuthority.Password);
            return certificate.Thumbprint;
        }

        public void Dispose() => Directory.Delete(Path, recursive: true);
    }

    /// <summary>Certificates in the current user's My store, which tools/isolated.sh makes the run's own; removed on dispose.</summary>
    private sealed class StoredCertificates : IDisposable
    {
        private readonly List<X509Certificate2> _added = [];

        /// <summary>Adds the PFX file's certificate with its key, and returns its common name.</summary>
        public string Add(string pfxPath)
        {
            IsolatedStore.Require();
            var certificate = X509CertificateLoader.LoadPkcs12FromFile(pfxPath, TestCertificateAuthority.Password, X509KeyStorageFlags.Exportable);
            using var store = new X509Store(StoreName.My, StoreLocation.CurrentUser);
            store.Open(OpenFlags.ReadWrite);
            store.Add(certificate);
            _added.Add(certificate);
            return certificate.GetNameInfo(X509NameType.SimpleName, forIssuer: false);
        }

        public void Dispose()
        {
            using var store = new X509Store(StoreName.My, StoreLocation.CurrentUser);
            store.Open(OpenFlags.ReadWrite);
            foreach (var certificate in _added)
            {
                store.Remove(certificate);
                certificate.Dispose();
            }
        }
    }

    /// <summary>
    /// A TLS server that asks for a client certificate and keeps its thumbprint: the certificate a node presents when it
    /// connects. Akka's handshake that follows fails, which the node takes as an unreachable peer.
    /// </summary>
    private sealed class TlsPeerServer : IDisposable
    {
        private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
        private readonly X509Certificate2 _certificate;

        public TlsPeerServer(string pfxPath)
        {
            _certificate = X509CertificateLoader.LoadPkcs12FromFile(pfxPath, TestCertificateAuthority.Password);
            _listener.Start();
        }

        public async Task<string?> ClientCertificateOf(Node node)
        {
            var port = ((IPEndPoint)_listener.LocalEndpoint).Port;
            var accepted = _listener.AcceptTcpClientAsync();
            _ = node.System.ActorSelection($"akka.ssl.tcp://peer@127.0.0.1:{port}/user/none").ResolveOne(TimeSpan.FromSeconds(5))
                .ContinueWith(static t => t.Exception, TaskScheduler.Default);
            using var tcp = await accepted.WaitAsync(TimeSpan.FromSeconds(10));
            string? presented = null;
            await using var tls = new SslStream(tcp.GetStream(), false, (_, certificate, _, _) =>
            {
                presented = certificate?.GetCertHashString();
                return true;
            });
            await tls.AuthenticateAsServerAsync(new SslServerAuthenticationOptions { ServerCertificate = _certificate, ClientCertificateRequired = true })
                .WaitAsync(TimeSpan.FromSeconds(10));
            return presented;
        }

        public void Dispose()
        {
            _listener.Stop();
            _certificate.Dispose();
        }
    }
}
#endif
