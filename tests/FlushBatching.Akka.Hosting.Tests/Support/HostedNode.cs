using System.Net;
using System.Net.Sockets;
using Akka.Actor;
using Akka.Cluster;
using Akka.Hosting;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace FlushBatching.Akka.Hosting.Tests.Support;

/// <summary>A generic host running one ActorSystem configured through Akka.Hosting, its log kept.</summary>
public sealed class HostedNode : IAsyncDisposable
{
    public const string SystemName = "hosted";

    private HostedNode(IHost host, CollectingLoggerProvider logs)
    {
        Host = host;
        Logs = logs;
    }

    public IHost Host { get; }

    public CollectingLoggerProvider Logs { get; }

    public ActorSystem System => Host.Services.GetRequiredService<ActorSystem>();

    /// <summary>A port free right now on loopback, for a node whose address a seed list must name in advance.</summary>
    public static int FreePort()
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        return ((IPEndPoint)socket.LocalEndPoint!).Port;
    }

    /// <summary>Builds the host with Akka's log going to the host's loggers, and configures Akka with <paramref name="configure"/>.</summary>
    public static HostedNode Create(Action<AkkaConfigurationBuilder> configure, Action<IServiceCollection>? services = null)
    {
        var logs = new CollectingLoggerProvider();
        var host = new HostBuilder()
            .ConfigureLogging(logging => logging.ClearProviders().AddProvider(logs).SetMinimumLevel(LogLevel.Information))
            .ConfigureServices(collection =>
            {
                services?.Invoke(collection);
                collection.AddAkka(SystemName, builder =>
                {
                    builder.ConfigureLoggers(loggers => loggers.ClearLoggers().AddLoggerFactory());
                    configure(builder);
                });
            })
            .Build();
        return new HostedNode(host, logs);
    }

    /// <summary>Builds and starts the host.</summary>
    public static async Task<HostedNode> StartAsync(Action<AkkaConfigurationBuilder> configure, Action<IServiceCollection>? services = null)
    {
        var node = Create(configure, services);
        await node.Host.StartAsync();
        return node;
    }

    /// <summary>The INFO line the FlushBatching transport logs once it listens, or null on a stock node.</summary>
    public string? TransportLine => Logs.Lines.Select(l => l.Message).FirstOrDefault(m => m.Contains("FlushBatching transport listening", StringComparison.Ordinal));

    /// <summary>Waits until this node's cluster sees <paramref name="members"/> members, all Up.</summary>
    public async Task WaitForUpAsync(int members)
    {
        var cluster = Cluster.Get(System);
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        while (!(cluster.State.Members.Count == members && cluster.State.Members.All(m => m.Status == MemberStatus.Up)))
        {
            Assert.True(DateTime.UtcNow < deadline, $"the cluster did not reach {members} members Up: {string.Join(", ", cluster.State.Members)}");
            await Task.Delay(100);
        }
    }

    public async ValueTask DisposeAsync()
    {
        await Host.StopAsync();
        Host.Dispose();
    }
}
