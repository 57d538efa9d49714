namespace FlushBatching.Tcp;

/// <summary>
/// One connection's back-pressure marks. Marks set in the settings stay as set. Left unset, the high mark starts at
/// <see cref="ConnectionSettings.DefaultWriteBufferFrames"/> maximum-size frames and follows how fast the connection
/// drains: each time it drains from the high mark to the low one, the high mark becomes what it would drain in
/// <see cref="DrainTarget"/> at that rate, from its start up to <see cref="MaxGrowth"/> times it, and the low mark half
/// of that.
/// </summary>
/// <remarks>
/// <para>
/// Why: a refused write costs Akka.Remote more than the wait. Its EndpointWriter keeps the message, not the bytes, and
/// serializes it again on every retry, after a backoff of up to 50 ms; with megabyte messages that is a megabyte on the
/// large object heap per retry. A fixed mark below what a node keeps in flight refuses on every link; one far above it
/// lets a heartbeat wait behind more bulk than a slow link sends in seconds, since Akka.Remote sends heartbeats ahead
/// of the messages it holds but not ahead of what the transport has taken. A mark of what the connection drains in
/// <see cref="DrainTarget"/> bounds that wait by the time, on any link, and lifts the refusals where the link is fast.
/// </para>
/// <para>
/// A peer that stops reading drains nothing, so its connection's next drain brings the mark back to its start, and
/// what a stalled peer holds is bounded by <see cref="MaxGrowth"/> times the start at most. The clock is read twice per
/// refusal episode and never on the write path. Not thread-safe: the sockets stack calls it under its write queue's
/// lock, the DotNetty stack on the channel's event loop.
/// </para>
/// </remarks>
internal sealed class WriteBufferMarks
{
    /// <summary>
    /// 0.5 s: what a connection may hold, in time at its own drain rate, once its mark has followed the rate. A sixth of
    /// Akka.Cluster's <c>acceptable-heartbeat-pause</c> (3 s), so a heartbeat queued behind it is still in time.
    /// </summary>
    internal static readonly TimeSpan DrainTarget = TimeSpan.FromMilliseconds(500);

    /// <summary>
    /// 4: the high mark follows the drain rate up to four times its start, 32 maximum-size frames (64 MB with 2 MB frames):
    /// the most a peer that stops reading can hold on one connection.
    /// </summary>
    internal const int MaxGrowth = 4;

    private readonly TimeProvider _time;
    private readonly long _start;
    private readonly long _most;
    private readonly bool _follows;
    private readonly bool _lowSet;
    private bool _draining;
    private long _unwritableSince;
    private long _unsentWhenUnwritable;

    public WriteBufferMarks(ConnectionSettings settings)
    {
        _time = settings.TimeProvider;
        _start = settings.WriteBufferHighWaterMark;
        _follows = settings.HighWaterMarkFollowsDrain;
        _lowSet = settings.LowWaterMarkIsSet;
        _most = Math.Min(ConnectionSettings.MaxWriteBufferWaterMark, _start * MaxGrowth);
        High = _start;
        Low = settings.WriteBufferLowWaterMark;
    }

    /// <summary>Unsent bytes above which writes are refused.</summary>
    public long High { get; private set; }

    /// <summary>Unsent bytes at or below which a connection that passed <see cref="High"/> takes writes again.</summary>
    public long Low { get; private set; }

    /// <summary>The connection passed <see cref="High"/> with <paramref name="unsent"/> bytes unsent: its drain starts.</summary>
    public void OnUnwritable(long unsent)
    {
        if (_follows && !_draining)
        {
            _draining = true;
            _unwritableSince = _time.GetTimestamp();
            _unsentWhenUnwritable = unsent;
        }
    }

    /// <summary>
    /// The connection drained to <see cref="Low"/>, with <paramref name="unsent"/> bytes left: the marks follow the rate.
    /// </summary>
    /// <returns>Whether the marks changed; never without a drain started by <see cref="OnUnwritable"/>.</returns>
    public bool OnWritable(long unsent)
    {
        if (!_draining)
        {
            return false;
        }

        _draining = false;
        var drained = Math.Max(0, _unsentWhenUnwritable - unsent);
        var elapsed = _time.GetElapsedTime(_unwritableSince);

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
