using System.Diagnostics;
using Akka.Actor;
using Akka.Cluster;
using Akka.Remote;

namespace ClusterNode;

/// <summary>
/// Keeps a bounded window of sequenced messages flowing to the traffic actor of every other Up member, at a set rate,
/// and checks what arrives: order and content per stream. Every message is acknowledged; a window that
/// sees no acknowledgement for <c>stallTimeout</c> is given up (counted as abandoned) so traffic resumes after a fault.
/// </summary>
/// <remarks>All state is touched on the actor's own thread; the report reads a copy through <see cref="Snapshot"/>.</remarks>
public sealed class Traffic : ReceiveActor, IWithTimers
{
    public const string Name = "traffic";

    private static readonly object Tick = new();
    private static readonly TimeSpan TickInterval = TimeSpan.FromMilliseconds(20);

    private readonly int _window;
    private readonly double _ratePerPeer;
    private readonly int _maximumPayload;
    private readonly TimeSpan _stallTimeout;
    private readonly Dictionary<Address, Outbound> _outbound = [];
    private readonly Dictionary<(Address Sender, long Stream), long> _expected = [];
    private readonly Dictionary<Address, PeerStats> _stats = [];
    private long _lastTick = Stopwatch.GetTimestamp();

    public Traffic(int window, double ratePerPeer, int maximumPayload, TimeSpan stallTimeout)
    {
        _window = window;
        _ratePerPeer = ratePerPeer;
        _maximumPayload = maximumPayload;
        _stallTimeout = stallTimeout;

        Receive<ClusterEvent.MemberUp>(up => Add(up.Member));
        Receive<ClusterEvent.MemberRemoved>(removed =>
        {
            if (_outbound.TryGetValue(removed.Member.Address, out var peer) && peer.Uid == removed.Member.UniqueAddress.Uid)
            {
                _outbound.Remove(removed.Member.Address);
            }
        });
        Receive<ClusterEvent.IMemberEvent>(_ => { });
        Receive<ClusterEvent.CurrentClusterState>(state =>
        {
            foreach (var member in state.Members.Where(m => m.Status == MemberStatus.Up))
            {
                Add(member);
            }
        });
        Receive<DisassociatedEvent>(e => Stats(e.RemoteAddress).Disassociations++);
        Receive<AssociationErrorEvent>(e => Stats(e.RemoteAddress).Disassociations++);
        Receive<byte[]>(OnData);
        Receive<long>(OnAck);
        Receive<GetSnapshot>(_ => Sender.Tell(Snapshot()));
        Receive<object>(message =>
        {
            if (ReferenceEquals(message, Tick))
            {
                OnTick();
            }
        });
    }

    public ITimerScheduler Timers { get; set; } = null!;

    protected override void PreStart()
    {
        Cluster.Get(Context.System).Subscribe(Self, ClusterEvent.SubscriptionInitialStateMode.InitialStateAsSnapshot, typeof(ClusterEvent.IMemberEvent));
        Context.System.EventStream.Subscribe(Self, typeof(DisassociatedEvent));
        Context.System.EventStream.Subscribe(Self, typeof(AssociationErrorEvent));
        Timers.StartPeriodicTimer("tick", Tick, TickInterval);
    }

    protected override void PostStop()
    {
        Cluster.Get(Context.System).Unsubscribe(Self);
        Context.System.EventStream.Unsubscribe(Self);
    }

    private void Add(Member member)
    {
        var self = Cluster.Get(Context.System).SelfUniqueAddress;
        if (member.UniqueAddress.Equals(self)
            || (_outbound.TryGetValue(member.Address, out var existing) && existing.Uid == member.UniqueAddress.Uid))
        {
            return;
        }

        // A new incarnation at a known address gets a new stream, its sequence from 0. The old incarnation's stream may
        // still be sending (abandoned windows refill until its removal is seen), and its messages reach whichever
        // incarnation holds the address: one stream per pair of incarnations keeps the two sequences apart.
        _outbound[member.Address] = new Outbound(member.UniqueAddress.Uid, Context.ActorSelection(new RootActorPath(member.Address) / "user" / Name));
    }

    private void OnData(byte[] bytes)
    {
        var from = Sender.Path.Address;
        var stats = Stats(from);
        var (stream, sequence) = Payload.Header(bytes);
        if (!Payload.IsIntact(bytes, _maximumPayload))
        {
            stats.Corrupt++;
            return;
        }

        var expected = _expected.GetValueOrDefault((from, stream));
        if (sequence < expected)
        {
            stats.Reordered++;
        }
        else
        {
            if (sequence > expected)
            {
                stats.Gaps++;
                stats.Missing += sequence - expected;
            }

            stats.Received++;
            _expected[(from, stream)] = sequence + 1;
        }

        Sender.Tell(sequence);
    }

    private void OnAck(long sequence)
    {
        if (_outbound.TryGetValue(Sender.Path.Address, out var peer) && sequence >= peer.AckedUpTo && sequence < peer.Next)
        {
            Stats(Sender.Path.Address).Acked += sequence + 1 - peer.AckedUpTo;
            peer.AckedUpTo = sequence + 1;
            peer.LastProgress = Stopwatch.GetTimestamp();
            Fill(Sender.Path.Address, peer);
        }
    }

    private void OnTick()
    {
        var now = Stopwatch.GetTimestamp();
        var seconds = Stopwatch.GetElapsedTime(_lastTick, now).TotalSeconds;
        _lastTick = now;
        foreach (var (address, peer) in _outbound)
        {
            peer.Tokens = _ratePerPeer <= 0 ? double.MaxValue : Math.Min(peer.Tokens + (seconds * _ratePerPeer), _window);
            if (peer.Next > peer.AckedUpTo && Stopwatch.GetElapsedTime(peer.LastProgress, now) > _stallTimeout)
            {
                Stats(address).Abandoned += peer.Next - peer.AckedUpTo;
                peer.AckedUpTo = peer.Next;
                peer.LastProgress = now;
            }

            Fill(address, peer);
        }
    }

    private void Fill(Address address, Outbound peer)
    {
        var stats = Stats(address);
        while (peer.Next - peer.AckedUpTo < _window && peer.Tokens >= 1)
        {
            if (peer.Next == peer.AckedUpTo)
            {
                peer.LastProgress = Stopwatch.GetTimestamp();
            }

            peer.Target.Tell(Payload.Create(peer.Stream, peer.Next, _maximumPayload), Self);
            peer.Next++;
            peer.Tokens--;
            stats.Sent++;
        }
    }

    private PeerStats Stats(Address address)
    {
        if (!_stats.TryGetValue(address, out var stats))
        {
            stats = new PeerStats();
            _stats[address] = stats;
        }

        return stats;
    }

    private Dictionary<string, PeerStats> Snapshot() => _stats.ToDictionary(
        s => s.Key.ToString(),
        s => new PeerStats
        {
            Sent = s.Value.Sent, Acked = s.Value.Acked, Abandoned = s.Value.Abandoned, Received = s.Value.Received, Gaps = s.Value.Gaps,
            Missing = s.Value.Missing, Reordered = s.Value.Reordered, Corrupt = s.Value.Corrupt, Disassociations = s.Value.Disassociations,
        });

    /// <summary>Asks for a copy of the counters, keyed by peer address.</summary>
    public sealed class GetSnapshot
    {
        public static readonly GetSnapshot Instance = new();
    }

    private sealed class Outbound(long uid, ActorSelection target)
    {
        public long Uid { get; } = uid;

        public ActorSelection Target { get; } = target;

        /// <summary>This sender incarnation's stream to this receiver incarnation, named at random.</summary>
        public long Stream { get; } = Random.Shared.NextInt64(1, long.MaxValue);

        public long Next { get; set; }

        public long AckedUpTo { get; set; }

        public double Tokens { get; set; }

        public long LastProgress { get; set; } = Stopwatch.GetTimestamp();
    }
}
