using System.Security.Cryptography.X509Certificates;
using Akka.Cluster.Hosting;
using Akka.Hosting;
using Akka.Remote.Hosting;
using FlushBatching.Akka.Hosting.Tests.Support;
using FlushBatching.Tests.Support;
using Microsoft.Extensions.Configuration;

namespace FlushBatching.Akka.Hosting.Tests;

/// <summary>Real generic hosts, configured as an Akka.Hosting app is, forming clusters over loopback.</summary>
public sealed class HostedClusterTests
{
    private static string Seed(int port, string scheme = "tcp") => $"akka.{scheme}://{HostedNode.SystemName}@127.0.0.1:{port}";

    [Theory]
    [InlineData(TransportStack.Sockets, "sockets")]
    [InlineData(TransportStack.DotNetty, "DotNetty")]
    public async Task Two_hosts_form_a_cluster_over_each_stack_whichever_order_the_calls_come_in(TransportStack stack, string stackName)
    {
        int first = RawPeer.ClosedEndPoint().Port, second = RawPeer.ClosedEndPoint().Port;
        var cluster = new ClusterOptions { SeedNodes = [Seed(first)] };
        await using var a = await HostedNode.StartAsync(b => b
            .WithRemoting("127.0.0.1", first)
            .WithClustering(cluster)
            .WithFlushBatching(o => { o.Transport = stack; o.MaxPendingWrites = 64; }));
        await using var b = await HostedNode.StartAsync(b => b
            .WithFlushBatching(o => { o.Transport = stack; o.MaxPendingWrites = 64; })
            .WithClustering(cluster)
            .WithRemoting("127.0.0.1", second));

        await a.WaitForUpAsync(2);
        await b.WaitForUpAsync(2);
        foreach (var node in new[] { a, b })
        {
            var line = await node.WaitForTransportLineAsync();
            Assert.Contains(stackName, line);
            Assert.Contains("max-pending-writes = 64", line);
        }
    }

    [Fact]
    public async Task A_host_on_FlushBatching_and_a_host_on_stock_form_one_cluster()
    {
        int first = RawPeer.ClosedEndPoint().Port, second = RawPeer.ClosedEndPoint().Port;
        var cluster = new ClusterOptions { SeedNodes = [Seed(first)] };
        await using var stock = await HostedNode.StartAsync(b => b.WithRemoting("127.0.0.1", first).WithClustering(cluster));
        await using var batching = await HostedNode.StartAsync(b => b.WithRemoting("127.0.0.1", second).WithClustering(cluster).WithFlushBatching());

        await stock.WaitForUpAsync(2);
        await batching.WaitForUpAsync(2);
        await batching.WaitForTransportLineAsync();
        Assert.Null(stock.TransportLine);
    }

    // An operator's switch, and switch back, with no code change: the options bound from appsettings.json's section,
    // as the FlushBatchingOptions docs show; the node joins a FlushBatching peer either way. A section deleted to roll
    // back leaves the node on stock, never switches it over.
    [Theory]
    [InlineData("true", true)]
    [InlineData("false", false)]
    [InlineData(null, false)]
    public async Task A_node_is_switched_over_and_back_by_its_configuration_alone(string? enabled, bool onFlushBatching)
    {
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(enabled is null
            ? new Dictionary<string, string?> { ["Elsewhere:Key"] = "value" }
            : new Dictionary<string, string?>
            {
                ["FlushBatching:Enabled"] = enabled,
                ["FlushBatching:MaxPendingWrites"] = "64",
            }).Build();
        int first = RawPeer.ClosedEndPoint().Port, second = RawPeer.ClosedEndPoint().Port;
        var cluster = new ClusterOptions { SeedNodes = [Seed(first)] };
        await using var node = await HostedNode.StartAsync(b => b
            .WithRemoting("127.0.0.1", first)
            .WithClustering(cluster)
            .WithFlushBatching(configuration.GetSection("FlushBatching")));
        await using var peer = await HostedNode.StartAsync(b => b.WithRemoting("127.0.0.1", second).WithClustering(cluster).WithFlushBatching());

        await node.WaitForUpAsync(2);
        await peer.WaitForUpAsync(2);
        await peer.WaitForTransportLineAsync();
        if (onFlushBatching)
        {
            Assert.Contains("max-pending-writes = 64", await node.WaitForTransportLineAsync());
        }
        else
        {
            Assert.Null(node.TransportLine);
        }
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task Tls_set_with_WithRemoting_carries_over_whichever_comes_first(bool remotingFirst)
    {
        using var certificate = new SelfSignedCertificate();
        using var x509 = X509CertificateLoader.LoadPkcs12FromFile(certificate.PfxPath, SelfSignedCertificate.Password);
        int first = RawPeer.ClosedEndPoint().Port, second = RawPeer.ClosedEndPoint().Port;
        var cluster = new ClusterOptions { SeedNodes = [Seed(first, "ssl.tcp")] };
        void Configure(AkkaConfigurationBuilder builder, int port)
        {
            var remote = new RemoteOptions
            {
                HostName = "127.0.0.1",
                Port = port,
                EnableSsl = true,
                Ssl = new SslOptions { X509Certificate = x509, SuppressValidation = true },
            };
            if (remotingFirst)
            {
                builder.WithRemoting(remote).WithFlushBatching();
            }
            else
            {
                builder.WithFlushBatching().WithRemoting(remote);
            }

            builder.WithClustering(cluster);
        }

        await using var a = await HostedNode.StartAsync(b => Configure(b, first));
        await using var b = await HostedNode.StartAsync(b => Configure(b, second));

        await a.WaitForUpAsync(2);
        await b.WaitForUpAsync(2);
        Assert.Contains("akka.ssl.tcp://", await a.WaitForTransportLineAsync());
        Assert.Contains("akka.ssl.tcp://", await b.WaitForTransportLineAsync());
    }

    [Fact]
    public async Task Hocon_added_earlier_that_names_the_stock_transport_does_not_win()
    {
        var port = RawPeer.ClosedEndPoint().Port;
        await using var node = await HostedNode.StartAsync(b => b
            .AddHocon("akka.remote.dot-netty.tcp.transport-class = \"Akka.Remote.Transport.DotNetty.TcpTransport, Akka.Remote\"", HoconAddMode.Append)
            .WithRemoting("127.0.0.1", port)
            .WithFlushBatching());

        await node.WaitForTransportLineAsync();
    }
}
