using System.Globalization;
using DotNetty.Common.Concurrency;

namespace FlushBatching.DotNetty;

/// <summary>
/// A task for a channel's event loop that either runs there or, when the loop terminates without running it, has its
/// fallback run instead, once, on the thread that sees the termination. DotNetty 0.7.6's loop never refuses a task:
/// <c>Execute</c> queues it whatever the loop's state, and a task queued after the shutdown's last look at the queue
/// stays there for ever, with nothing thrown. So a read start, a drain or a close given to a loop that stops under it
/// would be lost without a word. An executor that refuses the task instead (<see cref="RejectedExecutionException"/>,
/// as other <see cref="IEventExecutor"/>s may while they terminate) has the fallback run inside the call.
/// </summary>
/// <remarks>
/// No look at the loop's state before the task is queued, only after: a task queued while the loop was not shutting
/// down is run by the shutdown, which runs what was queued before it began; one queued later may not be, and its
/// fallback waits for the termination. One task allocated per call, as DotNetty's own <c>Execute(action, state)</c>
/// allocates one, and one interlocked exchange when it runs.
/// </remarks>
internal sealed class LoopTask : IRunnable
{
    private readonly Action<object> _task;
    private readonly Action<object> _fallback;
    private readonly object _state;
    private int _claimed;

    private LoopTask(Action<object> task, Action<object> fallback, object state)
    {
        _task = task;
        _fallback = fallback;
        _state = state;
    }

    /// <summary>
    /// Runs <paramref name="task"/> on <paramref name="loop"/>, or <paramref name="fallback"/> if the loop terminates
    /// without running it; exactly one of them runs, at most once. The fallback runs inside this call when the loop has
    /// terminated already, so its caller can refuse at once what it was asked to do.
    /// </summary>
    public static void Execute(IEventExecutor loop, Action<object> task, Action<object> fallback, object state)
    {
        var work = new LoopTask(task, fallback, state);
        try
        {
            loop.Execute(work);
        }
        catch (RejectedExecutionException)
        {
            work.RunFallback();
            return;
        }

        if (loop.IsShuttingDown)
        {
            loop.TerminationCompletion.ContinueWith(
                static (_, work) => ((LoopTask)work!).RunFallback(), work, CancellationToken.None,
                TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        }
    }

    /// <summary>
    /// Why a connection ended when its loop terminated before it ran <paramref name="what"/>: one wording for every task a
    /// loop may lose, with the bytes accepted and never sent when the task had writes to lose.
    /// </summary>
    public static IOException Lost(object connection, string what, long? unsent = null) => new(unsent is { } bytes
        ? string.Create(CultureInfo.InvariantCulture, $"The connection {connection} ended: its event loop stopped before it ran {what}, and {bytes:N0} bytes accepted were not sent.")
        : $"The connection {connection} ended: its event loop stopped before it ran {what}.");

    void IRunnable.Run()
    {
        if (Interlocked.Exchange(ref _claimed, 1) == 0)
        {
            _task(_state);
        }
    }

    private void RunFallback()
    {
        if (Interlocked.Exchange(ref _claimed, 1) == 0)
        {
            _fallback(_state);
        }
    }
}
