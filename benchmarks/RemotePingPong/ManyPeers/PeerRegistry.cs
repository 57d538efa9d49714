using System.Diagnostics;
using Akka.Actor;
using HdrHistogram;

namespace RemotePingPong.ManyPeers;

/// <summary>
/// The hub node's one actor: peers register their echo actors with it, and it sends each one
/// <paramref name="pingsPerSecond"/> pings a second of <paramref name="payload"/> bytes (a timestamp first), staggered
/// over the second, recording every round trip while a window is open.
/// </summary>
public sealed class PeerRegistry(int pingsPerSecond, int payload) : UntypedActor, IWithTimers
{
    /// <summary>The many-peers table's load: one ping a second per peer, a timestamp alone.</summary>
    public PeerRegistry()
        : this(1, sizeof(long))
    {
    }

    public const string Name = "registry";

    /// <summary>What a peer's echo actor sends to register.</summary>
    public const string Hello = "hello";

    private const int TicksPerSecond = 10;

    private readonly List<IActorRef> _peers = [];
    private readonly HashSet<IActorRef> _known = [];
    private readonly LongHistogram _roundTrips = new(1, 3_600_000_000, 3);
    private long _ticks;
    private bool _recording;

    public ITimerScheduler Timers { get; set; } = null!;

    protected override void PreStart() =>
        Timers.StartPeriodicTimer("ping", Tick.Instance, TimeSpan.FromSeconds(1.0 / TicksPerSecond));

    protected override void OnReceive(object message)
    {
        switch (message)
        {
            case Hello:
                if (_known.Add(Sender))
                {
                    _peers.Add(Sender);
                }

                break;
            case Tick:
                // Peer i's pings fall where (ticks * rate / TicksPerSecond + i / peers) passes a whole number: at one a
                // second, the next tenth of the peers each tick, and no burst of 200 at once.
                var tick = _ticks++;
                for (var i = 0; i < _peers.Count; i++)
                {
                    var phase = (double)i / _peers.Count;
                    var due = Math.Floor(((tick + 1) * pingsPerSecond / (double)TicksPerSecond) + phase) - Math.Floor((tick * pingsPerSecond / (double)TicksPerSecond) + phase);
                    for (var n = 0; n < due; n++)
                    {
                        var ping = new byte[payload];
                        BitConverter.TryWriteBytes(ping, Stopwatch.GetTimestamp());
                        _peers[i].Tell(ping);
                    }
                }

                break;
            case byte[] { Length: >= sizeof(long) } ping when _recording:
                var elapsed = Stopwatch.GetElapsedTime(BitConverter.ToInt64(ping));
                _roundTrips.RecordValue(Math.Max(1, (long)(elapsed.Ticks / (TimeSpan.TicksPerMillisecond / 1000))));
                break;
            case byte[]:
                break;
            case CountPeers:
                Sender.Tell(_peers.Count);
                break;
            case OpenWindow:
                _roundTrips.Reset();
                _recording = true;
                Sender.Tell(true);
                break;
            case CloseWindow:
                _recording = false;

                // HdrHistogram throws for a percentile of nothing, and a throwing actor would restart without
                // answering: a window no round trip finished in is a count of 0, for the caller to judge.
                Sender.Tell(_roundTrips.TotalCount == 0
                    ? new RoundTrips(0, 0, 0, 0)
                    : new RoundTrips(
                        _roundTrips.TotalCount,
                        _roundTrips.GetValueAtPercentile(50),
                        _roundTrips.GetValueAtPercentile(99),
                        _roundTrips.GetMaxValue()));
                break;
            default:
                Unhandled(message);
                break;
        }
    }

    /// <summary>The reply is how many peers have registered.</summary>
    public sealed record CountPeers;

    /// <summary>Start recording round trips afresh.</summary>
    public sealed record OpenWindow;

    /// <summary>Stop recording; the reply is <see cref="RoundTrips"/>.</summary>
    public sealed record CloseWindow;

    /// <summary>The round trips of one window, in microseconds.</summary>
    public sealed record RoundTrips(long Count, long P50Us, long P99Us, long MaxUs);

    private sealed record Tick
    {
        public static readonly Tick Instance = new();
    }
}
