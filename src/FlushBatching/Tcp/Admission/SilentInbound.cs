using System.Globalization;
using System.Net;

namespace FlushBatching.Tcp.Admission;

/// <summary>
/// The accepted connections that have not sent a byte yet, oldest first, at most <see cref="Bound"/> of them (half of
/// the listener's <see cref="InboundSlots"/>). A connection counts from the moment it is accepted, before any TLS
/// handshake, until its first byte arrives; one that has sent a byte is never closed here. When an accept makes more
/// than <see cref="Bound"/>, the listener accepts no more until the oldest has been silent for <see cref="Grace"/>, and
/// closes it then. Both stacks' listeners hold their accepted connections here, so the rule is written once.
/// </summary>
/// <remarks>
/// <para>
/// Why: a peer that means to talk speaks at once (a TLS client its ClientHello, an Akka.Remote peer its handshake), so
/// the longest silent is the likeliest stranger, and closing it lets the listener take the next connection instead of
/// pausing at its bound until strangers time out at <c>connection-timeout</c>. A flood of connections that never speak,
/// however fast it reopens what is closed, then holds at most half the bound, and a new peer waiting in the backlog
/// behind the flood's connections gets in: the listener takes <see cref="Bound"/> of them every <see cref="Grace"/>.
/// </para>
/// <para>
/// Why the grace: without it, a flood accepted faster than a real peer's first bytes are read would close the peer
/// moments after it was accepted, as the oldest of a set that turns over in microseconds. Thread-safe: connections are
/// accepted, speak and end on any thread.
/// </para>
/// </remarks>
internal sealed class SilentInbound
{
    /// <summary>How long a connection may stay silent before it can be closed to make room: 200 ms.</summary>
    public static readonly TimeSpan Grace = TimeSpan.FromMilliseconds(200);

    private readonly LinkedList<Entry> _waiting = new();
    private readonly TimeProvider _time;
    private readonly object _gate = new();

    /// <param name="bound">How many may be silent at once; at least 1.</param>
    /// <param name="time">The clock the grace is counted on.</param>
    public SilentInbound(int bound, TimeProvider time)
    {
        Bound = Math.Max(1, bound);
        _time = time;
    }

    /// <summary>The most that may be silent at once.</summary>
    public int Bound { get; }

    /// <summary>
    /// After an accept, before the next: true when no more than <see cref="Bound"/> are silent, made so if need be by
    /// closing the oldest (their <c>close</c> called on this thread), each once it has been silent for
    /// <see cref="Grace"/>. False when one must go but the oldest is younger than that: <paramref name="wait"/> says for
    /// how long at most (it may speak sooner). Nothing is closed while no newer connection needs the room.
    /// </summary>
    public bool TryTrim(out TimeSpan wait)
    {
        wait = TimeSpan.Zero;
        while (true)
        {
            Entry oldest;
            lock (_gate)
            {
                if (_waiting.Count <= Bound)
                {
                    return true;
                }

                oldest = _waiting.First!.Value;
                var silentFor = _time.GetElapsedTime(oldest.Since);
                if (silentFor < Grace)
                {
                    wait = Grace - silentFor;
                    return false;
                }

                _waiting.Remove(oldest.Node);
                oldest.ClosedAsSilent = true;
            }

            oldest.Close();
        }
    }

    /// <summary>Counts a connection just accepted as silent, the newest.</summary>
    /// <param name="close">Closes the connection as the longest silent; called at most once, and never after <see cref="Heard"/>.</param>
    /// <returns>What <see cref="Heard"/> takes once the connection has sent a byte, or has ended.</returns>
    public Entry Add(Action close)
    {
        var entry = new Entry(close, _time.GetTimestamp());
        lock (_gate)
        {
            _waiting.AddLast(entry.Node);
        }

        return entry;
    }

    /// <summary>Takes <paramref name="entry"/> out: its peer sent a byte, or its connection ended. Safe to call any number of times.</summary>
    public void Heard(Entry entry)
    {
        lock (_gate)
        {
            if (entry.Node.List is not null)
            {
                _waiting.Remove(entry.Node);
            }
        }
    }

    /// <summary>One accepted connection among the silent.</summary>
    internal sealed class Entry
    {
        private volatile bool _closedAsSilent;

        public Entry(Action close, long since)
        {
            Close = close;
            Since = since;
            Node = new LinkedListNode<Entry>(this);
        }

        /// <summary>Whether it was closed to make room, as the longest silent; set before its close is called.</summary>
        public bool ClosedAsSilent
        {
            get => _closedAsSilent;
            set => _closedAsSilent = value;
        }

        public Action Close { get; }

        public long Since { get; }

        public LinkedListNode<Entry> Node { get; }
    }

    /// <summary>The report of a connection closed as the longest silent, in the same words on both stacks.</summary>
    public IOException Closed(EndPoint? remote, EndPoint? listening) => new(string.Create(CultureInfo.InvariantCulture,
        $"The connection {SetupTimeouts.Inbound(remote, listening)} sent nothing and was closed, the longest silent of {Bound} inbound " +
        $"connections that had sent nothing for {Grace.TotalMilliseconds:0} ms or more (half of {SettingKeys.MaxInboundConnections})"));
}
