using DotNetty.Common.Concurrency;

namespace FlushBatching.DotNetty;

/// <summary>
/// The flush-interval timer of <see cref="BatchingWriterHandler"/>: armed only while writes are pending, it runs its
/// callback on the channel's event loop, so the handler's state stays on that loop.
/// </summary>
/// <remarks>Armed, disarmed and disposed on the channel's event loop only, by the one handler that owns it.</remarks>
/// <param name="timeProvider">Whose timer to use.</param>
/// <param name="onDue">Called on the event loop when an armed timer fires.</param>
internal sealed class IntervalTimer(TimeProvider timeProvider, Action onDue)
{
    private static readonly Action<object> RunTask = static state => ((IntervalTimer)state).Run();
    private static readonly TimerCallback OnFired = static state =>
    {
        // An event loop shutting down after the timer was armed has closed its channels: nothing is left to flush. A task
        // that reaches it as it terminates is never run (DotNetty 0.7.6's loops queue every task), or is refused (other
        // executors throw RejectedExecutionException then, here on a timer's thread, where it would end the process):
        // either loses nothing here.
        var timer = (IntervalTimer)state!;
        if (timer._executor is { IsShuttingDown: false } executor)
        {
            try
            {
                executor.Execute(RunTask, timer);
            }
            catch (RejectedExecutionException)
            {
            }
        }
    };

    private IEventExecutor? _executor;
    private ITimer? _timer;
    private bool _armed;

    /// <summary>Whether the timer is armed and has not fired yet.</summary>
    public bool IsArmed => _armed;

    /// <summary>Arms the timer to fire on <paramref name="executor"/> after <paramref name="due"/>.</summary>
    public void Arm(IEventExecutor executor, TimeSpan due)
    {
        _executor = executor;
        _timer ??= timeProvider.CreateTimer(OnFired, this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        _timer.Change(due, Timeout.InfiniteTimeSpan);
        _armed = true;
    }

    /// <summary>Stops an armed timer; it can be armed again.</summary>
    public void Disarm()
    {
        if (_armed)
        {
            _timer!.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
            _armed = false;
        }
    }

    /// <summary>Releases the timer; arming again creates a new one.</summary>
    public void Dispose()
    {
        _armed = false;
        _timer?.Dispose();
        _timer = null;
        _executor = null;
    }

    private void Run()
    {
        _armed = false;
        onDue();
    }
}
