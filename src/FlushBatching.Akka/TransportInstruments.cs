using System.Diagnostics.Metrics;
using System.Net;
using FlushBatching.Diagnostics;

namespace FlushBatching.Akka;

/// <summary>
/// The names and tags of the instruments a FlushBatching transport publishes beside the core's (docs/metrics.md), for
/// dashboards, alerts and OpenTelemetry views: each transport's <c>FlushBatching</c> Meter carries them, every
/// measurement tagged with <see cref="AddressTag"/>.
/// </summary>
public static class TransportInstruments
{
    /// <summary>
    /// The tag on every measurement of a transport's <c>FlushBatching</c> Meter: its configured address, such as
    /// <c>akka.tcp://MySystem@10.0.0.5:4053</c> (port 0 when the port is left to the system).
    /// </summary>
    public const string AddressTag = "akka.address";

    /// <summary>
    /// The tag of <c>flushbatching.transport.listening</c> that names the I/O stack: <c>sockets</c> or <c>dotnetty</c>.
    /// </summary>
    public const string StackTag = "flushbatching.stack";

    /// <summary>
    /// The tag of <c>flushbatching.transport.listening</c> that names what runs the DotNetty stack's event loops:
    /// <c>thread-pool</c> or <c>dedicated</c>, as <c>event-loop</c> says. The sockets stack has none.
    /// </summary>
    public const string EventLoopTag = "flushbatching.event_loop";

    /// <summary>
    /// The instrument that reads 1 for every FlushBatching transport listening in the process, tagged with its
    /// <see cref="AddressTag"/>, <see cref="StackTag"/> and, on DotNetty, <see cref="EventLoopTag"/>: that a node runs
    /// this transport, and on which stack, can be checked from its metrics at any log level.
    /// </summary>
    public const string ListeningInstrument = "flushbatching.transport.listening";

    /// <summary>
    /// The instrument that reads, for each peer this transport has connections with, the bytes written to them and not
    /// yet sent, tagged with <see cref="AddressTag"/>, <see cref="PeerAddressTag"/>, <see cref="DirectionTag"/> and, for
    /// a peer this node dialled, <see cref="PeerPortTag"/>: when <c>flushbatching.writes.refused</c> rises, the series
    /// that stays high names the slow peer. One series per peer and direction, keyed by what stays the same when the peer
    /// reconnects (never the port a peer connects from), summing its connections; it ends with the peer's last connection.
    /// </summary>
    public const string PeerUnsentInstrument = "flushbatching.peer.unsent";

    /// <summary>The tag of <see cref="PeerUnsentInstrument"/> that gives the peer's IP address, as OpenTelemetry names it.</summary>
    public const string PeerAddressTag = "network.peer.address";

    /// <summary>
    /// The tag of <see cref="PeerUnsentInstrument"/> that gives the port this node dialled the peer at, the port it
    /// listens on. Not on inbound series: the port a peer connects from is new for each connection, and would start a
    /// series per reconnect.
    /// </summary>
    public const string PeerPortTag = "network.peer.port";

    /// <summary>
    /// The tag of <see cref="PeerUnsentInstrument"/> that says who opened the connection: <c>outbound</c> (this node) or
    /// <c>inbound</c> (the peer).
    /// </summary>
    public const string DirectionTag = "flushbatching.direction";

    /// <summary>One series while the transport listens, on its own Meter: disposed at shutdown, the series ends with it.</summary>
    internal static void PublishListening(FlushBatchingMetrics metrics, string address, IConnectionStack stack)
    {
        var tags = new List<KeyValuePair<string, object?>> { new(AddressTag, address), new(StackTag, stack.Name.ToLowerInvariant()) };
        if (stack.EventLoop is { } loops)
        {
            tags.Add(new(EventLoopTag, loops));
        }

        var measurement = new Measurement<int>(1, tags);
        metrics.Meter.CreateObservableUpDownCounter(
            ListeningInstrument, () => measurement, "{transport}",
            "1 for each FlushBatching transport listening, tagged with its address, its stack and (DotNetty) its event loops.");
    }

    /// <summary>
    /// <see cref="PeerUnsentInstrument"/> over the connections <paramref name="connections"/> gives at each look: one
    /// measurement per peer and direction, the connections to it (two while Akka replaces one) added up.
    /// </summary>
    internal static void PublishUnsentByPeer(
        FlushBatchingMetrics metrics, string address, Func<IEnumerable<(ITransportConnection Connection, IPEndPoint Peer, bool Inbound)>> connections)
    {
        metrics.Meter.CreateObservableUpDownCounter(
            PeerUnsentInstrument,
            () => connections()
                .GroupBy(tracked => (tracked.Peer.Address, Port: tracked.Inbound ? 0 : tracked.Peer.Port, tracked.Inbound))
                .Select(peer => new Measurement<long>(peer.Sum(tracked => tracked.Connection.UnsentBytes), Tags(address, peer.Key.Address, peer.Key.Port, peer.Key.Inbound))),
            "By",
            "Bytes written and not yet sent, for each peer this node has a connection with: the slow peer's series stays high.");
    }

    private static KeyValuePair<string, object?>[] Tags(string address, IPAddress peer, int port, bool inbound) => inbound
        ? [new(AddressTag, address), new(PeerAddressTag, peer.ToString()), new(DirectionTag, "inbound")]
        : [new(AddressTag, address), new(PeerAddressTag, peer.ToString()), new(PeerPortTag, port), new(DirectionTag, "outbound")];
}
