using Akka.Event;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Admission;

namespace FlushBatching.Akka;

/// <summary>
/// The one log line for inbound connections dropped before they were set up: a TLS handshake that failed or did not end
/// within <c>connection-timeout</c>, a peer silent past it, a bad first frame, a peer gone before its first frame.
/// At most one line per <see cref="Interval"/>: the first drop is logged at once, with its reason; those after it in the
/// same interval are counted, and the count goes out when the interval ends (with the last reason), so a flood of bad
/// peers makes a count, not a line each (as Kestrel rate-limits its logging under attack), and a flood that stops is
/// still counted.
/// </summary>
/// <remarks>Thread-safe: stacks report from their I/O threads and the adapter from timers.</remarks>
internal sealed class InboundSetupLog
{
    /// <summary>The least time between two lines.</summary>
    public static readonly TimeSpan Interval = TimeSpan.FromSeconds(10);

    private readonly ILoggingAdapter _log;
    private readonly TimeProvider _time;
    private readonly object _gate = new();
    private long _lastLine = long.MinValue;
    private long _unlogged;
    private Exception? _lastUnlogged;
    private ITimer? _countTimer;
    private bool _stopped;

    public InboundSetupLog(ILoggingAdapter log, TimeProvider time)
    {
        _log = log;
        _time = time;
    }

    /// <summary>
    /// Counts one dropped connection and logs it unless a line went out less than <see cref="Interval"/> ago; then the
    /// count goes out when that interval ends.
    /// </summary>
    /// <param name="reason">Why it was dropped; its message names the connection.</param>
    public void Dropped(Exception reason)
    {
        long unlogged;
        lock (_gate)
        {
            var now = _time.GetTimestamp();
            if (_lastLine != long.MinValue && _time.GetElapsedTime(_lastLine, now) is var since && since < Interval)
            {
                if (reason is InboundSlots.BoundReachedException)
                {
                    // A pause at the bound drops nothing, so it is not counted; the next one after the interval is said.
                    return;
                }

                _unlogged++;
                _lastUnlogged = reason;
                if (_countTimer is null && !_stopped)
                {
                    _countTimer = _time.CreateTimer(static state => ((InboundSetupLog)state!).LogCount(), this, Interval - since, Timeout.InfiniteTimeSpan);
                }

                return;
            }

            _lastLine = now;
            unlogged = _unlogged;
            _unlogged = 0;
        }

        if (reason is InboundSlots.BoundReachedException)
        {
            // A pause at max-inbound-connections drops nothing: said as it is, counted with the drops of its interval.
            _log.Warning("FlushBatching transport: {0}{1}", reason.Message,
                unlogged == 0 ? "" : $" ({unlogged} inbound connection(s) were dropped before they were set up since the last line)");
        }
        else if (unlogged == 0)
        {
            _log.Warning("FlushBatching transport dropped an inbound connection before it was set up: {0}", reason.Message);
        }
        else
        {
            _log.Warning(
                "FlushBatching transport dropped an inbound connection before it was set up: {0} ({1} more were dropped since the last line, at most one line per {2} s)",
                reason.Message, unlogged, Interval.TotalSeconds);
        }
    }

    /// <summary>Logs the count still held, if any, and sets no more timers: the transport is shutting down.</summary>
    public void Stop()
    {
        lock (_gate)
        {
            _stopped = true;
        }

        LogCount();
    }

    private void LogCount()
    {
        long unlogged;
        Exception last;
        lock (_gate)
        {
            _countTimer?.Dispose();
            _countTimer = null;
            if (_unlogged == 0)
            {
                return;
            }

            unlogged = _unlogged;
            last = _lastUnlogged!;
            _unlogged = 0;
            _lastLine = _time.GetTimestamp();
        }

        _log.Warning(
            "FlushBatching transport dropped {0} more inbound connection(s) before they were set up since the last line (at most one line per {1} s); the last: {2}",
            unlogged, Interval.TotalSeconds, last.Message);
    }
}
