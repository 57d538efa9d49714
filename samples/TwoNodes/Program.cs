// Two Akka.NET nodes in one process, each switched to FlushBatching by the one HOCON line README.md gives; the client
// node asks the server node's echo actor 100 times over loopback. Each node logs "FlushBatching transport listening"
// at start (INFO). ./build.sh test makes a new console app by README.md's install commands, drops this file in, and
// runs it. Exits 0 after the 100 round trips, 1 if one fails.
using Akka.Actor;
using Akka.Configuration;

static ActorSystem StartNode(string name) => ActorSystem.Create(name, ConfigurationFactory.ParseString("""
    akka.actor.provider = remote
    akka.remote.dot-netty.tcp {
      hostname = 127.0.0.1
      port = 0
      transport-class = "FlushBatching.Akka.BatchingTcpTransport, FlushBatching.Akka"
    }
    """));

var server = StartNode("server");
var client = StartNode("client");
try
{
    server.ActorOf(Props.Create<Echo>(), "echo");
    var address = ((ExtendedActorSystem)server).Provider.DefaultAddress;
    var echo = await client.ActorSelection($"{address}/user/echo").ResolveOne(TimeSpan.FromSeconds(10));
    for (var i = 1; i <= 100; i++)
    {
        var reply = await echo.Ask<int>(i, TimeSpan.FromSeconds(10));
        if (reply != i)
        {
            Console.Error.WriteLine($"sent {i}, got {reply} back");
            return 1;
        }
    }

    Console.WriteLine($"100 round trips to {address}");
    return 0;
}
finally
{
    await client.Terminate();
    await server.Terminate();
}

internal sealed class Echo : ReceiveActor
{
    public Echo() => ReceiveAny(message => Sender.Tell(message));
}
