using Microsoft.Extensions.Time.Testing;

namespace FlushBatching.Tests.Support;

/// <summary>
/// <see cref="FakeTimeProvider"/> (time moves only when a test says, and due timers fire inside <c>Advance</c> on the
/// test's thread) that also counts its armed timers: FakeTimeProvider keeps them to itself, and a test of the DotNetty
/// handler asserts that no timer is left armed while nothing is pending.
/// </summary>
public sealed class TimerCountingClock : FakeTimeProvider
{
    private readonly HashSet<CountedTimer> _armed = [];
    private int _live;

    /// <summary>How many timers are armed: created, not disposed, and due at some time.</summary>
    public int ArmedTimers
    {
        get
        {
            lock (_armed)
            {
                return _armed.Count;
            }
        }
    }

    /// <summary>How many timers were created and not disposed, armed or not: what a handler leaves behind.</summary>
    public int LiveTimers => Volatile.Read(ref _live);

    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
    {
        var timer = new CountedTimer(this);
        Interlocked.Increment(ref _live);
        timer.Inner = base.CreateTimer(
            static state =>
            {
                var (timer, callback, callbackState) = ((CountedTimer, TimerCallback, object?))state!;
                timer.OnFired();
                callback(callbackState);
            },
            (timer, callback, state),
            Timeout.InfiniteTimeSpan,
            Timeout.InfiniteTimeSpan);
        timer.Change(dueTime, period);
        return timer;
    }

    private void Track(CountedTimer timer, bool armed)
    {
        lock (_armed)
        {
            if (armed)
            {
                _armed.Add(timer);
            }
            else
            {
                _armed.Remove(timer);
            }
        }
    }

    private sealed class CountedTimer(TimerCountingClock clock) : ITimer
    {
        private bool _periodic;
        private bool _disposed;

        public ITimer Inner { get; set; } = null!;

        public bool Change(TimeSpan dueTime, TimeSpan period)
        {
            if (_disposed)
            {
                return false;
            }

            _periodic = period != Timeout.InfiniteTimeSpan && period != TimeSpan.Zero;
            clock.Track(this, dueTime != Timeout.InfiniteTimeSpan);
            return Inner.Change(dueTime, period);
        }

        // A one-shot timer that fired is no longer armed; a periodic one stays armed.
        public void OnFired()
        {
            if (!_periodic)
            {
                clock.Track(this, armed: false);
            }
        }

        public void Dispose()
        {
            if (!_disposed)
            {
                Interlocked.Decrement(ref clock._live);
            }

            _disposed = true;
            clock.Track(this, armed: false);
            Inner.Dispose();
        }

        public ValueTask DisposeAsync()
        {
            Dispose();
            return ValueTask.CompletedTask;
        }
    }
}
