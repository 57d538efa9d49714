using System.Diagnostics;
using Akka.Actor;
using Akka.Remote;
using FlushBatching.Akka.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// A peer node that stops reading (here a relay in front of it stops reading, as a GC pause or a paused VM would) while
/// megabytes are queued to it: the node lets go of it on time, at shutdown and when it drops the association.
/// </summary>
public abstract partial class TransportSuite
{
    // Stock's time and a margin. Akka.Remote first gives its endpoints flush-wait-on-shutdown (2 s, left at its default
    // here), then the transport's shutdown gives connections still sending 0.5 s: 2.5-2.6 s measured on both stacks
    // against stock's 2.1 s. A shutdown that granted a whole close bound again took 4.0 s; one with no bound, 10 s (when
    // CoordinatedShutdown gives up).
    private static readonly TimeSpan TerminateBound = TimeSpan.FromSeconds(3.5);

    public static TheoryData<string> Senders => ["under-test", "stock"];

    [Theory]
    [MemberData(nameof(Senders))]
    public async Task Terminate_with_megabytes_queued_to_a_peer_that_stopped_reading_completes_in_stock_time_and_closes_the_socket(string sender)
    {
        var (relay, receiver, node) = await FrozenPeerWithMegabytesQueued(ClassOf(sender));
        await using var _ = relay;
        await using var __ = receiver;

        var watch = Stopwatch.StartNew();
        var terminated = node.System.Terminate();
        Assert.True(await Task.WhenAny(terminated, Task.Delay(TimeSpan.FromSeconds(30))) == terminated, "Terminate did not complete in 30 s");
        Assert.True(watch.Elapsed < TerminateBound, $"Terminate took {watch.Elapsed.TotalSeconds:F1} s with a frozen peer (bound {TerminateBound.TotalSeconds} s)");
        await Poll.Until(() => ProcessSockets.ConnectedTo(relay.Port) == 0, "the terminated node's socket to the frozen peer to be closed", seconds: 2);
    }

    [Fact]
    public async Task Quarantining_a_peer_that_stopped_reading_closes_its_socket_within_flush_wait_on_shutdown()
    {
        var (relay, receiver, node) = await FrozenPeerWithMegabytesQueued(TransportClass);
        await using var _ = relay;
        await using var __ = receiver;
        await using var ___ = node;

        // A hung node that is downed is quarantined: its association is dropped while this node lives on.
        var provider = (RemoteActorRefProvider)((ExtendedActorSystem)node.System).Provider;
        provider.Quarantine(receiver.Address, AddressUidExtension.Uid(receiver.System));

        // flush-wait-on-shutdown (2 s) and a margin for a shared machine.
        await Poll.Until(() => ProcessSockets.ConnectedTo(relay.Port) == 0, "the socket to the quarantined peer to be closed", seconds: 5);
    }

    // A receiving node behind a relay (its public port is the relay's), a sending node on `senderClass` that has written
    // to it until its connection refused, and the relay no longer reading: 400 messages of 100 KB are queued.
    private async Task<(Relay Relay, Node Receiver, Node Sender)> FrozenPeerWithMegabytesQueued(string senderClass)
    {
        var port = Relay.FreePort();
        var relay = Relay.Start(port);
        var receiver = Node.Start("frozen", TransportClass, $"port = {port}\npublic-port = {relay.Port}");
        var sender = Node.Start("sender", senderClass);
        receiver.System.ActorOf(Props.Create<Echo>(), "echo");
        var echo = await receiver.Resolve(sender, "echo");
        Assert.Equal("before", await echo.Ask<string>("before", AskTimeout));
        Assert.Equal(1, ProcessSockets.ConnectedTo(relay.Port));

        relay.StopReading();
        var payload = new byte[100_000];
        for (var i = 0; i < 400; i++)
        {
            echo.Tell(payload);
        }

        // The sender's socket holds what the relay's window could not take: the peer has stopped reading it.
        await Poll.Until(() => ProcessSockets.QueuedTo(relay.Port) > 64 * 1024, "the sender's socket to back up behind the frozen peer");
        return (relay, receiver, sender);
    }
}
