using System.Collections.Concurrent;
using DotNetty.Common;
using DotNetty.Common.Concurrency;
using DotNetty.Transport.Channels;

namespace FlushBatching.Akka;

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
/// the next one sees. <see cref="AbstractEventExecutor.InEventLoop"/> is true on the thread running a turn. A turn
/// runs at most <see cref="TasksPerTurn"/> tasks, then queues the loop again behind other work, so one busy connection
/// cannot hold a pool thread forever.
/// </para>
/// <para>
/// Scheduled tasks (DotNetty's connect timeout, the batching handler's flush-interval timer) wait in DotNetty's own
/// queue and run at the start of a turn once due; a timer queues a turn for the earliest. A loop shut down cancels its
/// scheduled tasks and completes its termination, but still runs what it is given after: unlike DotNetty's own loop,
/// which accepts work once stopped and never runs it.
/// </para>
/// </remarks>
internal sealed class ThreadPoolEventLoop : AbstractScheduledEventExecutor, IEventLoop, IThreadPoolWorkItem
{
    /// <summary>The most tasks one turn runs before it lets other work on its pool thread.</summary>
    public const int TasksPerTurn = 1024;

    private const int Running = 0;
    private const int ShuttingDown = 1;
    private const int Terminated = 2;

    private static readonly IRunnable Turn = new NoOp();

    private readonly ConcurrentQueue<IRunnable> _tasks = new();
    private readonly System.Threading.Tasks.TaskCompletionSource _termination = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Timer _timer;
    private Thread? _thread;
    private int _queued;
    private int _state;

    // Set while the timer is set and has not fired; the deadline it was set for is touched in turns only.
    private int _timerSet;
    private PreciseTimeSpan _timerDue = PreciseTimeSpan.MinusOne;

    /// <param name="parent">The group this loop is one of.</param>
    public ThreadPoolEventLoop(IEventLoopGroup parent)
        : base(parent)
    {
        _timer = new Timer(static state => ((ThreadPoolEventLoop)state!).OnTimer(), this, Timeout.Infinite, Timeout.Infinite);
    }

    public new IEventLoopGroup Parent => (IEventLoopGroup)base.Parent;

    public new IEnumerable<IEventLoop> Items => [this];

    public override bool IsShuttingDown => Volatile.Read(ref _state) >= ShuttingDown;

    public override bool IsShutdown => IsShuttingDown;

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

    /// <summary>Cancels the scheduled tasks and completes the termination, in a turn: what was queued before runs first.</summary>
    public override Task ShutdownGracefullyAsync(TimeSpan quietPeriod, TimeSpan timeout)
    {
        if (Interlocked.CompareExchange(ref _state, ShuttingDown, Running) == Running)
        {
            Execute(static state => ((ThreadPoolEventLoop)state).Terminate(), this);
        }

        return TerminationCompletion;
    }

    void IThreadPoolWorkItem.Execute()
    {
        Volatile.Write(ref _thread, Thread.CurrentThread);
        try
        {
            RunDueScheduledTasks();
            for (var run = 0; run < TasksPerTurn && _tasks.TryDequeue(out var task); run++)
            {
                SafeExecute(task);
            }

            SetTimer();
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
        _timer.Change((wait > TimeSpan.Zero ? wait : TimeSpan.Zero) + TimeSpan.FromMilliseconds(1), Timeout.InfiniteTimeSpan);
    }

    private void OnTimer()
    {
        Volatile.Write(ref _timerSet, 0);
        Execute(Turn);
    }

    private void Terminate()
    {
        CancelScheduledTasks();
        _timer.Dispose();
        Volatile.Write(ref _state, Terminated);
        _termination.TrySetResult();
    }

    private sealed class NoOp : IRunnable
    {
        public void Run()
        {
        }
    }
}
