namespace FlushBatching.Tcp.Loops;

/// <summary>
/// One connection's back-pressure marks. Marks set in the settings stay as set. Left unset, the high mark starts at
/// <see cref="ConnectionSettings.DefaultWriteBufferFrames"/> maximum-size frames and follows how fast the connection
/// sends while it has a backlog: the high mark is what it sends in <see cref="DrainTarget"/> at that rate, from its start
/// up to <see cref="MaxGrowth"/> times it, and the low mark half of that.
/// </summary>
/// <remarks>
/// <para>
/// Why: a refused write costs Akka.Remote more than the wait. Its EndpointWriter keeps the message, not the bytes, and
/// serializes it again on every retry, after a backoff of up to 50 ms; with megabyte messages that is a megabyte on the
/// large object heap per retry. A fixed mark below what a node keeps in flight refuses on every link; one far above it
/// lets a heartbeat wait behind more bulk than a slow link sends in seconds, since Akka.Remote sends heartbeats ahead
/// of the messages it holds but not ahead of what the transport has taken. A mark of what the connection sends in
/// <see cref="DrainTarget"/> bounds that wait by the time, on any link, and lifts the refusals where the link is fast.
/// </para>
/// <para>
/// The rate: while more than half the start is unsent, the connection sends as fast as its link and peer take, so the
/// bytes it sends over a <see cref="Window"/> of that, or over a drain of at least half the start that ends sooner, are
/// its rate. A link that slows is seen within a window, and a peer that stops reading sends nothing, so its
/// connection's mark falls back to the start by the next look; what a stalled peer holds is bounded by
/// <see cref="MaxGrowth"/> times the start. The stacks call <see cref="Observe"/> as they send: the clock is read there
/// only while a backlog is unsent, never on the write path. Not thread-safe: the sockets stack calls it under its
/// write queue's lock, the DotNetty stack on the channel's event loop.
/// </para>
/// </remarks>
internal sealed class WriteBufferMarks
{
    /// <summary>
    /// 0.5 s: what a connection may hold, in time at its own rate, once its mark has followed the rate. A sixth of
    /// Akka.Cluster's <c>acceptable-heartbeat-pause</c> (3 s), so a heartbeat queued behind it is still in time.
    /// </summary>
    internal static readonly TimeSpan DrainTarget = TimeSpan.FromMilliseconds(500);

    /// <summary>100 ms: the longest the rate is measured over before the marks follow it.</summary>
    internal static readonly TimeSpan Window = TimeSpan.FromMilliseconds(100);

    /// <summary>
    /// 4: the high mark follows the rate up to four times its start, 32 maximum-size frames (64 MB with 2 MB frames):
    /// the most a peer that stops reading can hold on one connection.
    /// </summary>
    internal const int MaxGrowth = 4;

    private readonly TimeProvider _time;
    private readonly long _start;
    private readonly long _most;
    private readonly bool _follows;
    private readonly bool _lowSet;
    private bool _observing;
    private long _since;
    private long _sentSince;

    public WriteBufferMarks(ConnectionSettings settings)
    {
        _time = settings.TimeProvider;
        _start = settings.WriteBufferHighWaterMark;
        _follows = settings.HighWaterMarkFollowsDrain;
        _lowSet = settings.LowWaterMarkIsSet;
        _most = settings.WriteBufferHighWaterMarkMost;
        High = _start;
        Low = settings.WriteBufferLowWaterMark;
    }

    /// <summary>Unsent bytes above which writes are refused.</summary>
    public long High { get; private set; }

    /// <summary>Unsent bytes at or below which a connection that passed <see cref="High"/> takes writes again.</summary>
    public long Low { get; private set; }

    /// <summary>
    /// The connection has sent <paramref name="sent"/> bytes in all and holds <paramref name="unsent"/>: called as it
    /// sends, and as it turns unwritable and writable.
    /// </summary>
    /// <returns>Whether the marks changed.</returns>
    public bool Observe(long sent, long unsent)
    {
        var backlog = unsent > _start / 2;
        if (!_follows || (!_observing && !backlog))
        {
            return false;
        }

        var now = _time.GetTimestamp();
        if (!_observing)
        {
            Begin(now, sent);
            return false;
        }

        var elapsed = _time.GetElapsedTime(_since, now);
        var drained = sent - _sentSince;
        var measured = elapsed >= Window || (!backlog && drained >= _start / 2);
        var changed = measured && Follow(drained, elapsed);
        if (!backlog)
        {
            _observing = false;
        }
        else if (measured)
        {
            Begin(now, sent);
        }

        return changed;
    }

    private void Begin(long now, long sent)
    {
        _observing = true;
        _since = now;
        _sentSince = sent;
    }

    private bool Follow(long drained, TimeSpan elapsed)
    {
        // Drained faster than the clock can tell: as fast as a mark may follow.
        var high = elapsed <= TimeSpan.Zero
            ? _most
            : (long)Math.Clamp(drained * (DrainTarget / elapsed), _start, (double)_most);
        if (high == High)
        {
            return false;
        }

        High = high;
        if (!_lowSet)
        {
            Low = high / 2;
        }

        return true;
    }
}
