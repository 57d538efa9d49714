using System.Collections.Concurrent;
using DotNetty.Common;
using DotNetty.Common.Concurrency;
using DotNetty.Common.Internal.Logging;
using DotNetty.Transport.Channels;

namespace FlushBatching.Akka.DotNettyStack;

/// <summary>
/// A DotNetty event loop without a thread of its own: its tasks run one at a time, in order, as work items on the .NET
/// thread pool, the same pool Akka's dispatcher and the sockets' completions run on. A DotNetty thread sleeps between
/// bursts, and every hand-off to it, and from it back to Akka, wakes a sleeping thread: at one connection that is a
/// context switch for every few messages, more CPU than the work it moves. Here a task queued from a pool thread goes to
/// that thread's own queue and usually runs on it next, with no thread woken.
/// </summary>
/// <remarks>
/// <para>
/// The loop's guarantees are DotNetty's: tasks run in the order queued, never two at once, and what one task wrote
/// the next one sees. <see cref="AbstractEventExecutor.InEventLoop"/> is true on the thread running a turn, and
/// <see cref="TaskScheduler.Current"/> there is the loop's own scheduler, as on DotNetty's loops: a continuation a task
/// starts without naming a scheduler runs on the loop. A task that throws is logged by DotNetty and the turn goes on. A
/// turn runs at most <see cref="TasksPerTurn"/> tasks, then queues the loop again behind other work, so one busy
/// connection cannot hold a pool thread forever.
/// </para>
/// <para>
/// Scheduled tasks (DotNetty's connect timeout, the batching handler's flush-interval timer) wait in DotNetty's own
/// queue and run at the start of a turn once due; a timer queues a turn for the earliest, at most a day ahead (a task
/// scheduled further out is looked at again then).
/// </para>
/// <para>
/// A shutdown cancels the scheduled tasks and terminates once no task has run for its quiet period, or at its timeout
/// whatever runs. That last differs from DotNetty's own loop, whose thread a task that never returns keeps from
/// terminating: here the thread is the pool's, and the loop counts as terminated at the timeout, so whoever waits on the
/// shutdown goes on; the task holding it still ends when it ends. A loop terminated still runs what it is given, where
/// DotNetty's refuses it.
/// </para>
/// </remarks>
internal sealed class ThreadPoolEventLoop : AbstractScheduledEventExecutor, IEventLoop, IThreadPoolWorkItem
{
    /// <summary>The most tasks one turn runs before it lets other work on its pool thread.</summary>
    public const int TasksPerTurn = 1024;

    // The longest the timer waits: System.Threading.Timer takes at most about 49.7 days, and a turn every day for a task
    // scheduled further out costs nothing.
    private static readonly TimeSpan LongestTimerWait = TimeSpan.FromDays(1);

    // How often a shutdown with a quiet period looks again whether the loop has been quiet, as DotNetty's loop does.
    private static readonly TimeSpan QuietCheck = TimeSpan.FromMilliseconds(100);

    private const int Running = 0;
    private const int ShuttingDown = 1;
    private const int Terminated = 2;

    private static readonly IRunnable Turn = new NoOp();
    private static readonly IInternalLogger Logger = InternalLoggerFactory.GetInstance<ThreadPoolEventLoop>();

    private readonly ConcurrentQueue<IRunnable> _tasks = new();
    private readonly System.Threading.Tasks.TaskCompletionSource _termination = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Timer _timer;
    private readonly LoopScheduler _scheduler;
    private Thread? _thread;
    private int _queued;
    private int _state;
    private long _turns;
    private long _failedTurns;

    // The tasks run so far, counted in turns only.
    private long _tasksRun;

    // Set when the shutdown begins, read in turns.
    private TimeSpan _quietPeriod;
    private long _shutdownDeadline;
    private long _tasksSeen;
    private long _quietSince;

    // Set while the timer is set and has not fired; the deadline it was set for is touched in turns only.
    private int _timerSet;
    private PreciseTimeSpan _timerDue = PreciseTimeSpan.MinusOne;

    /// <param name="parent">The group this loop is one of.</param>
    public ThreadPoolEventLoop(IEventLoopGroup parent)
        : base(parent)
    {
        _timer = new Timer(static state => ((ThreadPoolEventLoop)state!).OnTimer(), this, Timeout.Infinite, Timeout.Infinite);
        _scheduler = new LoopScheduler(this);
    }

    /// <summary>The turns the loop has run: a test reads it to see a long queue split.</summary>
    internal long Turns => Volatile.Read(ref _turns);

    /// <summary>The turns that failed outside their tasks (each logged): a test reads it.</summary>
    internal long FailedTurns => Volatile.Read(ref _failedTurns);

    public new IEventLoopGroup Parent => (IEventLoopGroup)base.Parent;

    public new IEnumerable<IEventLoop> Items => [this];

    public override bool IsShuttingDown => Volatile.Read(ref _state) >= ShuttingDown;

    public override bool IsShutdown => IsTerminated;

    public override bool IsTerminated => Volatile.Read(ref _state) == Terminated;

    public override Task TerminationCompletion => _termination.Task;

    public new IEventLoop GetNext() => this;

    public Task RegisterAsync(IChannel channel) => channel.Unsafe.RegisterAsync(this);

    public override bool IsInEventLoop(Thread thread) => ReferenceEquals(Volatile.Read(ref _thread), thread);

    public override void Execute(IRunnable task)
    {
        _tasks.Enqueue(task);
        if (Interlocked.Exchange(ref _queued, 1) == 0)
        {
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: true);
        }
    }

    /// <summary>
    /// Cancels the scheduled tasks, then terminates in a turn once no task has run for <paramref name="quietPeriod"/>
    /// (at once for zero: what was queued before runs first), and at <paramref name="timeout"/> whatever runs.
    /// </summary>
    public override Task ShutdownGracefullyAsync(TimeSpan quietPeriod, TimeSpan timeout)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(quietPeriod, TimeSpan.Zero);
        ArgumentOutOfRangeException.ThrowIfLessThan(timeout, quietPeriod);
        if (Interlocked.CompareExchange(ref _state, ShuttingDown, Running) == Running)
        {
            _quietPeriod = quietPeriod;
            _shutdownDeadline = Environment.TickCount64 + (long)timeout.TotalMilliseconds;
            _tasksSeen = -1;
            Execute(static state => ((ThreadPoolEventLoop)state).ConfirmShutdown(), this);

            // A task that never returns keeps the turn above from running: the timeout ends the shutdown without it.
            _ = Task.Delay(timeout).ContinueWith(
                static (_, state) => ((ThreadPoolEventLoop)state!).MarkTerminated(), this, CancellationToken.None,
                TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        }

        return TerminationCompletion;
    }

    void IThreadPoolWorkItem.Execute()
    {
        Volatile.Write(ref _thread, Thread.CurrentThread);
        try
        {
            // Inside a task of the loop's scheduler, so that TaskScheduler.Current is the loop's, as on DotNetty's
            // loops. The scheduler runs it inline: this thread is the loop's now.
            var turn = new Task(static state => ((ThreadPoolEventLoop)state!).RunTurn(), this);
            turn.RunSynchronously(_scheduler);
            if (turn.Exception is { } failed)
            {
                // Not a task's failure (those are logged by SafeExecute) but the loop's own: logged as DotNetty logs a
                // task's, and the loop goes on, where an exception out of a work item would end the process.
                Interlocked.Increment(ref _failedTurns);
                Logger.Warn("A turn of a thread-pool event loop failed outside its tasks.", failed.GetBaseException());
            }
        }
        finally
        {
            Volatile.Write(ref _thread, null);
        }

        // Released before the look at the queue: a task queued after the look queues a turn of its own. A full fence,
        // as the store must not pass the load below.
        Interlocked.Exchange(ref _queued, 0);
        if (!_tasks.IsEmpty && Interlocked.Exchange(ref _queued, 1) == 0)
        {
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
        }
    }

    protected override IEnumerable<IEventExecutor> GetItems() => [this];

    private void RunTurn()
    {
        Interlocked.Increment(ref _turns);
        RunDueScheduledTasks();
        for (var run = 0; run < TasksPerTurn && _tasks.TryDequeue(out var task); run++)
        {
            _tasksRun++;
            SafeExecute(task);
        }

        SetTimer();
    }

    private void RunDueScheduledTasks()
    {
        var now = PreciseTimeSpan.FromStart;
        while (PollScheduledTask(now) is { } due)
        {
            SafeExecute(due);
        }
    }

    // After a turn: the timer queues a turn when the earliest scheduled task is due, unless it already will. Once
    // terminated there is no timer: what was scheduled since is cancelled, as the termination cancelled the rest.
    private void SetTimer()
    {
        var next = PeekScheduledTask();
        if (next is null)
        {
            return;
        }

        if (IsTerminated)
        {
            CancelScheduledTasks();
            return;
        }

        if (next.Deadline == _timerDue && Volatile.Read(ref _timerSet) == 1)
        {
            return;
        }

        // A millisecond more: the timer counts whole milliseconds, and one that fires early only costs a turn.
        _timerDue = next.Deadline;
        Volatile.Write(ref _timerSet, 1);
        var wait = (next.Deadline - PreciseTimeSpan.FromStart).ToTimeSpan();
        wait = wait <= TimeSpan.Zero ? TimeSpan.Zero : wait < LongestTimerWait ? wait : LongestTimerWait;
        _timer.Change(wait + TimeSpan.FromMilliseconds(1), Timeout.InfiniteTimeSpan);
    }

    private void OnTimer()
    {
        Volatile.Write(ref _timerSet, 0);
        Execute(Turn);
    }

    // A task of the loop: the scheduled tasks are the loop's to cancel. With a quiet period, terminates once the looks
    // have found no task but themselves run for that long, or at the deadline; until then it looks again, as DotNetty's
    // loop does.
    private void ConfirmShutdown()
    {
        CancelScheduledTasks();
        var now = Environment.TickCount64;
        if (_tasksRun != _tasksSeen + 1)
        {
            _quietSince = now;
        }

        _tasksSeen = _tasksRun;
        if (_quietPeriod == TimeSpan.Zero || now - _quietSince >= (long)_quietPeriod.TotalMilliseconds || now >= _shutdownDeadline)
        {
            _timer.Dispose();
            MarkTerminated();
            return;
        }

        // Not through the scheduled tasks, which a shutdown cancels.
        _ = Task.Delay(QuietCheck).ContinueWith(
            static (_, state) => ((ThreadPoolEventLoop)state!).Execute(static loop => ((ThreadPoolEventLoop)loop).ConfirmShutdown(), state!),
            this, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
    }

    private void MarkTerminated()
    {
        Volatile.Write(ref _state, Terminated);
        _termination.TrySetResult();
    }

    private sealed class NoOp : IRunnable
    {
        public void Run()
        {
        }
    }

    // The loop as a TaskScheduler, as DotNetty's ExecutorTaskScheduler is for its loops: a task queued to it runs as one
    // of the loop's tasks, and one started on the loop runs inline.
    private sealed class LoopScheduler(ThreadPoolEventLoop loop) : TaskScheduler
    {
        protected override void QueueTask(Task task) => loop.Execute(static state => { var (scheduler, task) = ((LoopScheduler, Task))state; scheduler.TryExecuteTask(task); }, (this, task));

        protected override bool TryExecuteTaskInline(Task task, bool taskWasPreviouslyQueued) =>
            !taskWasPreviouslyQueued && loop.InEventLoop && TryExecuteTask(task);

        protected override IEnumerable<Task>? GetScheduledTasks() => null;
    }
}
