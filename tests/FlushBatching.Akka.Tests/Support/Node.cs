using Akka.Actor;
using Akka.Actor.Setup;
using Akka.Configuration;
using Akka.Event;
using FlushBatching.Tests.Support;

namespace FlushBatching.Akka.Tests.Support;

/// <summary>A real ActorSystem with remoting on 127.0.0.1 and a free port, on the transport class asked for.</summary>
public sealed class Node : IAsyncDisposable
{
    /// <summary>Akka.Remote's own DotNetty transport.</summary>
    public const string Stock = "Akka.Remote.Transport.DotNetty.TcpTransport, Akka.Remote";

    /// <summary>This project's transport on the core engine.</summary>
    public const string BatchingTcp = "FlushBatching.Akka.BatchingTcpTransport, FlushBatching.Akka";

    /// <summary>This project's transport on DotNetty's I/O with BatchingWriterHandler.</summary>
    public const string DotNettyBatching = "FlushBatching.Akka.DotNettyBatchingTransport, FlushBatching.Akka";

    private Node(ActorSystem system) => System = system;

    public ActorSystem System { get; }

    /// <summary>The address other nodes reach this one by.</summary>
    public Address Address => ((ExtendedActorSystem)System).Provider.DefaultAddress;

    /// <summary>Everything this node has logged so far.</summary>
    public IReadOnlyList<LogEvent> Logs => CollectingLogger.For(System);

    /// <summary>Starts a node; <paramref name="hocon"/> overrides the transport section and anything else.</summary>
    /// <param name="name">The ActorSystem's name.</param>
    /// <param name="transportClass">The value of akka.remote.dot-netty.tcp.transport-class.</param>
    /// <param name="transportHocon">Lines for inside the akka.remote.dot-netty.tcp section.</param>
    /// <param name="hocon">Lines at the top level.</param>
    public static Node Start(string name, string transportClass, string transportHocon = "", string hocon = "") =>
        new(ActorSystem.Create(name, ConfigFor(transportClass, transportHocon, hocon)));

    /// <summary><see cref="Start(string, string, string, string)"/> with setups given in code, such as a <c>DotNettySslSetup</c>.</summary>
    public static Node Start(string name, string transportClass, Setup[] setups, string transportHocon = "") =>
        new(ActorSystem.Create(name, ActorSystemSetup.Create([BootstrapSetup.Create().WithConfig(ConfigFor(transportClass, transportHocon)), .. setups])));

    /// <summary>The configuration <see cref="Start(string, string, string, string)"/> gives a node.</summary>
    public static Config ConfigFor(string transportClass, string transportHocon = "", string hocon = "") =>
        ConfigurationFactory.ParseString($$"""
            {{hocon}}
            akka.remote.dot-netty.tcp {
              {{transportHocon}}
            }
            """).WithFallback(ConfigurationFactory.ParseString($$"""
            akka {
              loglevel = INFO
              stdout-loglevel = WARNING
              loggers = ["{{typeof(CollectingLogger).FullName}}, {{typeof(CollectingLogger).Assembly.GetName().Name}}"]
              actor.provider = remote
              remote.dot-netty.tcp {
                hostname = 127.0.0.1
                port = 0
                transport-class = "{{transportClass}}"
              }
            }
            """));

    /// <summary>An actor of this node as seen from <paramref name="from"/>, resolved over the wire.</summary>
    public Task<IActorRef> Resolve(Node from, string path) =>
        from.System.ActorSelection(new RootActorPath(Address) / "user" / path).ResolveOne(TimeSpan.FromSeconds(10));

    public async ValueTask DisposeAsync() => await Poll.Within(System.Terminate());
}
