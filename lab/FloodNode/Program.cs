// One Akka.Remote node for the connection-flood tests (tests/FlushBatching.Akka.Tests/ConnectionFloodTests.cs): an
// echo actor at /user/echo on the transport named by the first argument (flushbatching, flushbatching-dotnetty,
// flushbatching-dotnetty-dedicated or stock), listening on 127.0.0.1 at a free port; extra arguments are lines for the
// transport's section. It prints "LISTENING <address>" once it serves, and ends when its standard input closes.
using System.Diagnostics;
using Akka.Actor;
using Akka.Configuration;

if (args[0] == "ask")
{
    // The experiment's peer: a stock node asking the echo at args[1] every 100 ms, one line per ask.
    using var asker = ActorSystem.Create("asker", ConfigurationFactory.ParseString("""
        akka { loglevel = WARNING, actor.provider = remote, remote.dot-netty.tcp { hostname = 127.0.0.1, port = 0 } }
        """));
    var echo = asker.ActorSelection(args[1] + "/user/echo");
    for (var i = 0; ; i++)
    {
        var watch = Stopwatch.StartNew();
        try
        {
            await echo.Ask<int>(i, TimeSpan.FromSeconds(1));
            Console.WriteLine($"ASK ok {watch.ElapsedMilliseconds}");
        }
        catch (Exception e)
        {
            Console.WriteLine($"ASK lost {e.GetType().Name}");
        }

        await Task.Delay(100);
    }
}

var transportClass = args[0] switch
{
    "flushbatching" => "FlushBatching.Akka.BatchingTcpTransport, FlushBatching.Akka",
    "flushbatching-dotnetty" or "flushbatching-dotnetty-dedicated" => "FlushBatching.Akka.DotNettyBatchingTransport, FlushBatching.Akka",
    "stock" => "Akka.Remote.Transport.DotNetty.TcpTransport, Akka.Remote",
    var other => throw new ArgumentException($"unknown transport '{other}'"),
};
var eventLoop = args[0] == "flushbatching-dotnetty-dedicated" ? "event-loop = dedicated" : "";
var config = ConfigurationFactory.ParseString($$"""
    akka {
      loglevel = WARNING
      actor.provider = remote
      remote.dot-netty.tcp {
        hostname = 127.0.0.1
        port = 0
        transport-class = "{{transportClass}}"
        {{eventLoop}}
        {{string.Join("\n", args.Skip(1))}}
      }
    }
    """);
// FLOODNODE_SYSTEMS=N starts N such systems in this one process (flood, flood2, ...), each printing its line.
var count = int.TryParse(Environment.GetEnvironmentVariable("FLOODNODE_SYSTEMS"), out var asked) ? asked : 1;
var systems = new List<ActorSystem>();
for (var i = 1; i <= count; i++)
{
    var system = ActorSystem.Create(i == 1 ? "flood" : $"flood{i}", config);
    systems.Add(system);
    system.ActorOf(Props.Create(() => new Echo()), "echo");
    Console.WriteLine($"LISTENING {((ExtendedActorSystem)system).Provider.DefaultAddress}");
}

await Task.Run(() => Console.In.ReadToEnd());
await Task.WhenAll(systems.Select(system => system.Terminate()));

sealed class Echo : ReceiveActor
{
    public Echo() => ReceiveAny(message => Sender.Tell(message));
}
