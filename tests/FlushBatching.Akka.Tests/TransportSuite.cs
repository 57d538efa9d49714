using Akka.Actor;
using Akka.Event;
using FlushBatching.Akka.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// The end-to-end tests every FlushBatching transport class must pass, with real ActorSystems over loopback TCP.
/// Each transport class gets one derived class that names it.
/// </summary>
public abstract class TransportSuite
{
    /// <summary>The transport class under test, as written in transport-class.</summary>
    protected abstract string TransportClass { get; }

    public static TheoryData<string, string> Peers => new()
    {
        { "under-test", "under-test" },
        { "under-test", "stock" },
        { "stock", "under-test" },
    };

    private string ClassOf(string which) => which == "stock" ? Node.Stock : TransportClass;

    [Theory]
    [MemberData(nameof(Peers))]
    public async Task Ask_round_trips_between_nodes(string client, string server)
    {
        await using var a = Node.Start("client", ClassOf(client));
        await using var b = Node.Start("server", ClassOf(server));
        b.System.ActorOf(Props.Create<Echo>(), "echo");
        var echo = await b.Resolve(a, "echo");

        Assert.Equal("hello", await echo.Ask<string>("hello", TimeSpan.FromSeconds(10)));
    }
}
