using Akka.Actor;
using Akka.Cluster;
using Akka.Hosting;
using FlushBatching.Tests.Support;
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

    /// <summary>The INFO line the FlushBatching transport logs once it listens, or null on a stock node (so far).</summary>
    public string? TransportLine => Logs.Lines.Select(l => l.Message).FirstOrDefault(m => m.Contains("FlushBatching transport listening", StringComparison.Ordinal));

    /// <summary>Waits for <see cref="TransportLine"/>: Akka's log reaches the host's loggers asynchronously.</summary>
    public async Task<string> WaitForTransportLineAsync()
    {
        await Poll.Until(() => TransportLine is not null, "the FlushBatching transport's line in the host's log", seconds: 10);
        return TransportLine!;
    }

    /// <summary>Waits until this node's cluster sees <paramref name="members"/> members, all Up.</summary>
    public Task WaitForUpAsync(int members)
    {
        var cluster = Cluster.Get(System);
        return Poll.Until(() => cluster.State.Members.Count == members && cluster.State.Members.All(m => m.Status == MemberStatus.Up), $"{members} members Up", seconds: 30);
    }

    public async ValueTask DisposeAsync()
    {
        await Host.StopAsync();
        Host.Dispose();
    }
}
