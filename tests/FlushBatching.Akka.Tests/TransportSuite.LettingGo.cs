using System.Diagnostics;
using System.Text.RegularExpressions;
using Akka.Actor;
using Akka.Remote;
using FlushBatching.Akka.Tests.Support;
using FlushBatching.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// A peer node that stops reading (here a relay in front of it stops reading, as a GC pause or a paused VM would) while
/// megabytes are queued to it: the node lets go of it on time, at shutdown and when it drops the association.
/// </summary>
public abstract partial class TransportSuite
{
    // What the transport adds to Akka.Remote's own shutdown, which stock's is too: Akka.Remote first gives its endpoints
    // flush-wait-on-shutdown (2 s by default) and only then calls the transport's Shutdown, which gives connections still
    // sending 0.5 s and aborts them. Stock aborts at once. What is asserted is what the transport did, from its own
    // shutdown line, which times the transport's part alone: it aborted the connection at its 0.5 s grace with bytes
    // unsent, took at most the grace and a margin for its own steps (closing the sockets, stopping the listener and the
    // DotNetty stack's loops), and logged no step that ran to its bound ("did not ... within"). A shutdown that granted a
    // whole close bound again let the connection close itself at 2 s ("0 aborted after 2s"); one with a step held to its
    // 2 s bound takes 2.5 s and warns. The margin for the transport's own steps is 1.5 s: with five test processes on 2
    // cores (a load average of about 25) the DotNetty stack on the thread-pool loop once took 1.54 s in all, its loops'
    // shutdown waiting for a pool thread, with no step past its bound.
    private static readonly TimeSpan OwnShutdownBound = FlushBatchingTransport.MaxShutdownGrace + TimeSpan.FromSeconds(1.5);

    // Only what nothing else sees: a Terminate that never ends (CoordinatedShutdown gives up at 10 s). Akka's own part
    // (flush-wait-on-shutdown, 2 s) and the event loops slow down on a loaded machine, where stock took 3.5 s.
    private static readonly TimeSpan TerminateBound = TimeSpan.FromSeconds(8);

    [LinuxFact("reads the process's sockets from /proc/net/tcp")]
    public async Task Terminate_with_megabytes_queued_to_a_peer_that_stopped_reading_lets_go_within_its_grace_and_closes_the_socket()
    {
        var (relay, receiver, node) = await FrozenPeerWithMegabytesQueued(TransportClass);
        await using var _ = relay;
        await using var __ = receiver;

        var recorder = EventRecorder.On(node.System);
        var watch = Stopwatch.StartNew();
        var terminated = node.System.Terminate();
        Assert.True(await Task.WhenAny(terminated, Task.Delay(TimeSpan.FromSeconds(30))) == terminated, "Terminate did not complete in 30 s");
        Assert.True(watch.Elapsed < TerminateBound, $"Terminate took {watch.Elapsed.TotalSeconds:F1} s with a frozen peer (bound {TerminateBound.TotalSeconds} s)");
        await Poll.Until(() => ProcessSockets.ConnectedTo(relay.Port) == 0, "the terminated node's socket to the frozen peer to be closed", seconds: 2);

        var line = recorder.Messages.Single(m => m.StartsWith("FlushBatching transport shut down in ", StringComparison.Ordinal));
        var own = Regex.Match(line, @"shut down in (\d+)(ms|s):") is { Success: true } m
            ? m.Groups[2].Value == "s" ? TimeSpan.FromSeconds(int.Parse(m.Groups[1].Value)) : TimeSpan.FromMilliseconds(int.Parse(m.Groups[1].Value))
            : throw new Xunit.Sdk.XunitException($"no duration in '{line}'");
        Assert.DoesNotContain(recorder.Messages, m => m.Contains("did not", StringComparison.Ordinal));
        Assert.True(own < OwnShutdownBound, $"the transport's own shutdown took {own.TotalSeconds:F2} s (bound {OwnShutdownBound.TotalSeconds} s): {line}");
        Assert.Matches(@"[1-9]\d* aborted after 500ms with [1-9]\d* bytes unsent", line);
    }

    [LinuxFact("reads the process's sockets from /proc/net/tcp")]
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
        var port = RawPeer.ClosedEndPoint().Port;
        var relay = Relay.Start(port);
        var receiver = Nodes.Start("frozen", TransportClass, $"port = {port}\npublic-port = {relay.Port}");
        var sender = Nodes.Start("sender", senderClass);
        receiver.System.ActorOf(Props.Create<Echo>(), "echo");
        var echo = await receiver.Resolve(sender, "echo");
        Assert.Equal("before", await echo.Ask<string>("before", AskTimeout));
        Assert.True(ProcessSockets.ConnectedTo(relay.Port) >= 1, "the sender holds no socket to the relay");

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
