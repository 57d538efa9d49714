using Akka.Actor;

namespace FlushBatching.Akka.Tests.Support;

/// <summary>
/// Steady traffic between cluster nodes, and what each node received: every node's <see cref="Source"/> sends a
/// numbered message to each other node's <see cref="Sink"/> every tick, one counter for all targets, so a receiver sees
/// each sender's numbers with no gap unless something was lost (or reordered) on the way.
/// </summary>
public sealed class PairTraffic
{
    private readonly object _gate = new();
    private readonly Dictionary<(string From, string To), (long Last, long Count)> _pairs = [];
    private readonly List<string> _faults = [];

    /// <summary>Losses and reorderings seen so far, one line each.</summary>
    public IReadOnlyList<string> Faults
    {
        get
        {
            lock (_gate)
            {
                return [.. _faults];
            }
        }
    }

    /// <summary>How many messages <paramref name="to"/> has received from <paramref name="from"/>.</summary>
    public long Received(string from, string to)
    {
        lock (_gate)
        {
            return _pairs.TryGetValue((from, to), out var pair) ? pair.Count : 0;
        }
    }

    private void Record(string from, string to, long number)
    {
        lock (_gate)
        {
            if (!_pairs.TryGetValue((from, to), out var pair))
            {
                _pairs[(from, to)] = (number, 1); // a new receiver (or sender) joins the stream where it is
                return;
            }

            if (number != pair.Last + 1)
            {
                _faults.Add($"{to} received {number} from {from} after {pair.Last}");
            }

            _pairs[(from, to)] = (Math.Max(pair.Last, number), pair.Count + 1);
        }
    }

    /// <summary>A numbered message from the incarnation named <paramref name="From"/>.</summary>
    public sealed record Numbered(string From, long Number);

    /// <summary>Records what arrives at the node incarnation named by <paramref name="self"/>.</summary>
    public sealed class Sink : ReceiveActor
    {
        public Sink(PairTraffic traffic, string self) => Receive<Numbered>(m => traffic.Record(m.From, self, m.Number));
    }

    /// <summary>Sends the next number to each of <paramref name="targets"/> (sink paths) every <paramref name="every"/>.</summary>
    public sealed class Source : ReceiveActor, IWithTimers
    {
        private readonly TimeSpan _every;

        public Source(string self, IReadOnlyList<string> targets, TimeSpan every)
        {
            _every = every;
            var selections = targets.Select(t => Context.ActorSelection(t)).ToList();
            var next = 0L;
            Receive<Tick>(_ =>
            {
                var message = new Numbered(self, next++);
                foreach (var selection in selections)
                {
                    selection.Tell(message);
                }
            });
        }

        public ITimerScheduler Timers { get; set; } = null!;

        protected override void PreStart() => Timers.StartPeriodicTimer("tick", Tick.Instance, _every);

        private sealed class Tick
        {
            public static readonly Tick Instance = new();
        }
    }
}
