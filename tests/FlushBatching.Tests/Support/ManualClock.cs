namespace FlushBatching.Tests.Support;

/// <summary>
/// A clock that moves only when told: by <see cref="Advance"/>, and by <see cref="TickPerRead"/> each time it is
/// read, which stands in for the time a drain takes per frame. Its timers fire inside <see cref="Advance"/>, on
/// the caller's thread, so a test decides exactly when a timer runs.
/// </summary>
public sealed class ManualClock : TimeProvider
{
    private readonly List<ManualTimer> _timers = [];
    private long _ticks = TimeSpan.TicksPerDay;

    public TimeSpan TickPerRead { get; set; }

    public override long TimestampFrequency => TimeSpan.TicksPerSecond;

    /// <summary>How many timers are armed: created, not disposed, and due at some time.</summary>
    public int ArmedTimers
    {
        get
        {
            lock (_timers)
            {
                return _timers.Count(timer => timer.DueAt is not null);
            }
        }
    }

    public override long GetTimestamp() => Interlocked.Add(ref _ticks, TickPerRead.Ticks);

    /// <summary>Moves the clock on, then runs the callbacks of the timers that are due by then, oldest first.</summary>
    public void Advance(TimeSpan by)
    {
        var now = Interlocked.Add(ref _ticks, by.Ticks);
        while (true)
        {
            ManualTimer? due;
            lock (_timers)
            {
                due = _timers.Where(timer => timer.DueAt <= now).MinBy(timer => timer.DueAt);
                if (due is null)
                {
                    return;
                }

                due.DueAt = due.Period > TimeSpan.Zero ? due.DueAt + due.Period.Ticks : null;
            }

            due.Callback(due.State);
        }
    }

    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
    {
        var timer = new ManualTimer(this, callback, state);
        lock (_timers)
        {
            _timers.Add(timer);
        }

        timer.Change(dueTime, period);
        return timer;
    }

    private sealed class ManualTimer(ManualClock clock, TimerCallback callback, object? state) : ITimer
    {
        public TimerCallback Callback { get; } = callback;

        public object? State { get; } = state;

        public long? DueAt { get; set; }

        public TimeSpan Period { get; private set; }

        public bool Change(TimeSpan dueTime, TimeSpan period)
        {
            lock (clock._timers)
            {
                if (!clock._timers.Contains(this))
                {
                    return false;
                }

                DueAt = dueTime == Timeout.InfiniteTimeSpan ? null : Interlocked.Read(ref clock._ticks) + dueTime.Ticks;
                Period = period == Timeout.InfiniteTimeSpan ? TimeSpan.Zero : period;
                return true;
            }
        }

        public void Dispose()
        {
            lock (clock._timers)
            {
                clock._timers.Remove(this);
            }
        }

        public ValueTask DisposeAsync()
        {
            Dispose();
            return ValueTask.CompletedTask;
        }
    }
}
