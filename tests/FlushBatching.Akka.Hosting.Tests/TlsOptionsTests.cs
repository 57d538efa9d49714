#if AKKA_1_5_75
using Akka.Actor;
using Akka.Configuration;
using Akka.Hosting;
using Akka.IO;
using Akka.Remote.Hosting;
using Akka.Remote.Transport.DotNetty;
using FlushBatching.Akka.Hosting.Tests.Support;
using FlushBatching.Tests.Support;

namespace FlushBatching.Akka.Hosting.Tests;

/// <summary>
/// Akka.Remote.Hosting 1.5.75's TLS options on this transport, each beside a stock node given the same options: a
/// certificate source, and a custom validator, which 1.5.75 applies to a certificate given by path too and refuses at
/// start without a certificate.
/// </summary>
public sealed class TlsOptionsTests
{
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task A_custom_validator_judges_the_peers_of_a_certificate_given_by_path_as_on_stock(bool flushBatching)
    {
        using var certificate = new SelfSignedCertificate();
        var judged = 0;
        int first = RawPeer.ClosedEndPoint().Port, second = RawPeer.ClosedEndPoint().Port;
        var ssl = new SslOptions
        {
            CertificateOptions = new SslCertificateOptions { Path = certificate.PfxPath, Password = SelfSignedCertificate.Password },
            SuppressValidation = true,
            CustomValidator = (_, _, _, _, _) =>
            {
                Interlocked.Increment(ref judged);
                return false;
            },
        };
        await using var a = await HostedNode.StartAsync(b => Configure(b, first, ssl, flushBatching));
        await using var b = await HostedNode.StartAsync(b => Configure(b, second, ssl, flushBatching));

        var selection = a.System.ActorSelection($"akka.ssl.tcp://{HostedNode.SystemName}@127.0.0.1:{second}/system");
        await Assert.ThrowsAsync<ActorNotFoundException>(() => selection.ResolveOne(TimeSpan.FromSeconds(3)));
        Assert.True(Volatile.Read(ref judged) > 0, "the validator was never asked");
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task A_custom_validator_without_a_certificate_stops_the_node_as_it_stops_stock(bool flushBatching)
    {
        var ssl = new SslOptions { CustomValidator = (_, _, _, _, _) => true };

        var e = await Assert.ThrowsAnyAsync<Exception>(() => HostedNode.StartAsync(b => Configure(b, RawPeer.ClosedEndPoint().Port, ssl, flushBatching)));

        Assert.IsType<ConfigurationException>(e.GetBaseException());
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task A_certificate_source_set_in_the_options_serves_a_node_of_either_transport(bool flushBatching)
    {
        // Allowed for client and server authentication both, as a source asks under mutual authentication.
        using var authority = new TestCertificateAuthority(trusted: false);
        var folder = Directory.CreateTempSubdirectory("flushbatching-certificates-").FullName;
        try
        {
            File.Copy(authority.IssueForLoopback(), Path.Combine(folder, "node.pfx"));
            var ssl = new SslOptions { CertificateSource = TlsCertificateSource.FromFolder(folder, TestCertificateAuthority.Password), SuppressValidation = true };
            int first = RawPeer.ClosedEndPoint().Port, second = RawPeer.ClosedEndPoint().Port;
            await using var a = await HostedNode.StartAsync(b => Configure(b, first, ssl, flushBatching));
            await using var b = await HostedNode.StartAsync(b => Configure(b, second, ssl, flushBatching: true));

            var peer = await a.System.ActorSelection($"akka.ssl.tcp://{HostedNode.SystemName}@127.0.0.1:{second}/system").ResolveOne(TimeSpan.FromSeconds(10));
            Assert.NotNull(peer);
            if (flushBatching)
            {
                Assert.Contains("akka.ssl.tcp://", await a.WaitForTransportLineAsync());
            }
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    private static void Configure(AkkaConfigurationBuilder builder, int port, SslOptions ssl, bool flushBatching)
    {
        builder.WithRemoting(new RemoteOptions { HostName = "127.0.0.1", Port = port, EnableSsl = true, Ssl = ssl });
        if (flushBatching)
        {
            builder.WithFlushBatching();
        }
    }
}
#endif
