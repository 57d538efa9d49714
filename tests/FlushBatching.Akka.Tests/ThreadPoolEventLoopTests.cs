using System.Collections.Concurrent;
using DotNetty.Transport.Channels;
using FlushBatching.Akka.DotNettyStack;
using FlushBatching.Tests.Support;
using Xunit;
using Xunit.Abstractions;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// The DotNetty stack's event loop on the thread pool keeps DotNetty's promises: one task at a time, in order, on a
/// thread that knows it is in the loop; scheduled tasks once due, cancelled ones never; a shutdown that ends.
/// </summary>
public sealed class ThreadPoolEventLoopTests(ITestOutputHelper output) : IAsyncLifetime
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    private readonly MultithreadEventLoopGroup _group = new(static group => new ThreadPoolEventLoop(group), 1);

    private IEventLoop Loop => _group.Items.Single();

    public Task InitializeAsync() => Task.CompletedTask;

    public Task DisposeAsync() => _group.ShutdownGracefullyAsync(TimeSpan.Zero, Timeout);

    [Fact]
    public async Task Tasks_from_many_threads_run_one_at_a_time_in_the_order_each_thread_queued_them()
    {
        const int Writers = 4;
        const int PerWriter = 20_000;
        var seen = new List<(int Writer, int Sequence)>(); // not thread-safe: the loop is what guards it
        var running = 0;
        var overlaps = 0;
        var inLoop = 0;
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        await Task.WhenAll(Enumerable.Range(0, Writers).Select(writer => Task.Run(() =>
        {
            for (var i = 0; i < PerWriter; i++)
            {
                var sequence = i;
                Loop.Execute(() =>
                {
                    if (Interlocked.Increment(ref running) != 1)
                    {
                        Interlocked.Increment(ref overlaps);
                    }

                    if (Loop.InEventLoop)
                    {
                        inLoop++;
                    }

                    Thread.SpinWait(50); // long enough for another thread to run a task at the same time, if it could
                    seen.Add((writer, sequence));
                    if (seen.Count == Writers * PerWriter)
                    {
                        done.TrySetResult();
                    }

                    Interlocked.Decrement(ref running);
                });
            }
        })));
        await Poll.Within(done.Task);

        Assert.Equal(0, overlaps);
        Assert.Equal(Writers * PerWriter, inLoop);
        Assert.False(Loop.InEventLoop);
        foreach (var writer in seen.GroupBy(entry => entry.Writer))
        {
            Assert.Equal(Enumerable.Range(0, PerWriter), writer.Select(entry => entry.Sequence));
        }
    }

    [Fact]
    public async Task A_task_queued_from_inside_the_loop_runs_after_the_one_queuing_it()
    {
        var order = new ConcurrentQueue<string>();
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Loop.Execute(() =>
        {
            Loop.Execute(() =>
            {
                order.Enqueue("queued from inside");
                done.TrySetResult();
            });
            order.Enqueue("queuing");
        });

        await Poll.Within(done.Task);

        Assert.Equal(["queuing", "queued from inside"], order);
    }

    [Fact]
    public async Task Scheduled_tasks_run_in_the_loop_once_due_and_each_exactly_once()
    {
        var runs = new int[50];
        var inLoop = 0;
        var scheduled = Enumerable.Range(0, runs.Length).Select(i => Loop.Schedule(() =>
        {
            Interlocked.Increment(ref runs[i]);
            if (Loop.InEventLoop)
            {
                Interlocked.Increment(ref inLoop);
            }
        }, TimeSpan.FromMilliseconds(i % 10 * 5))).ToList();

        await Poll.Within(Task.WhenAll(scheduled.Select(task => task.Completion)));

        Assert.All(runs, count => Assert.Equal(1, count));
        Assert.Equal(runs.Length, inLoop);
    }

    [Fact]
    public async Task A_scheduled_task_cancelled_before_it_is_due_never_runs()
    {
        var ran = false;
        var cancelled = Loop.Schedule(() => ran = true, TimeSpan.FromMilliseconds(200));
        var later = Loop.Schedule(() => { }, TimeSpan.FromMilliseconds(400));

        Assert.True(cancelled.Cancel());
        await Poll.Within(later.Completion);

        Assert.False(ran);
        Assert.True(cancelled.Completion.IsCanceled);
    }

    [Fact]
    public async Task A_shutdown_cancels_what_is_scheduled_then_and_after_and_ends_while_tasks_queued_after_it_still_run()
    {
        var scheduled = Loop.Schedule(() => { }, TimeSpan.FromMinutes(10));

        await Poll.Within(_group.ShutdownGracefullyAsync(TimeSpan.Zero, Timeout));
        var after = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Loop.Execute(() => after.TrySetResult());
        var scheduledAfter = Loop.Schedule(() => { }, TimeSpan.FromMinutes(10));

        Assert.True(Loop.IsShuttingDown);
        Assert.True(Loop.IsTerminated);
        Assert.True(scheduled.Completion.IsCanceled);
        await Poll.Within(after.Task);
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => Poll.Within(scheduledAfter.Completion));
    }

    [Fact]
    public async Task A_loop_held_by_a_task_that_does_not_return_terminates_at_the_shutdowns_timeout()
    {
        using var release = new ManualResetEventSlim();
        var held = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Loop.Execute(() =>
        {
            held.TrySetResult();
            release.Wait(Timeout * 2); // past every wait below: only the timeout can end the shutdown in time
        });
        await Poll.Within(held.Task);
        try
        {
            var terminating = _group.ShutdownGracefullyAsync(TimeSpan.Zero, TimeSpan.FromMilliseconds(200));
            Assert.True(Loop.IsShuttingDown, "not shutting down once asked to");
            Assert.False(Loop.IsShutdown, "shut down before it terminated");

            await Poll.Within(terminating);
            Assert.True(Loop.IsShutdown);
            Assert.True(Loop.IsTerminated);
        }
        finally
        {
            release.Set();
        }
    }

    [Fact]
    public async Task A_shutdown_with_a_quiet_period_waits_until_no_task_has_run_for_it()
    {
        var quiet = TimeSpan.FromMilliseconds(400);
        var feeding = TimeSpan.FromMilliseconds(1000);
        var watch = System.Diagnostics.Stopwatch.StartNew();
        var terminating = _group.ShutdownGracefullyAsync(quiet, Timeout);

        // A task that queues itself again for a second: the loop is never quiet, however late a timer or this thread
        // runs on a loaded machine, until it stops.
        var fed = 1;
        void Feed()
        {
            if (Volatile.Read(ref fed) == 1)
            {
                Loop.Execute(Feed);
            }
        }

        Loop.Execute(Feed);
        while (watch.Elapsed < feeding)
        {
            await Task.Delay(50);
            Assert.False(terminating.IsCompleted, $"terminated at {watch.ElapsedMilliseconds} ms while tasks still ran");
        }

        var stopped = watch.Elapsed;
        Volatile.Write(ref fed, 0);
        await Poll.Within(terminating);

        // It looks every 100 ms, so the quiet it saw began at most one look before the last task.
        Assert.True(watch.Elapsed >= stopped + quiet - TimeSpan.FromMilliseconds(200), $"terminated {(watch.Elapsed - stopped).TotalMilliseconds:F0} ms after the last task");
    }

    [Fact]
    public async Task A_task_scheduled_past_what_a_timer_can_wait_is_kept_and_the_loop_runs_on()
    {
        // System.Threading.Timer refuses waits past about 49.7 days; the loop's timer asked it for the whole wait, and
        // the exception left a work item, ending the process. A turn that fails is counted now, and none may.
        var far = Loop.Schedule(() => { }, TimeSpan.FromDays(60));
        var after = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Loop.Execute(() => after.TrySetResult());

        await Poll.Within(after.Task);
        var nearer = Loop.Schedule(() => { }, TimeSpan.FromMilliseconds(20));
        await Poll.Within(nearer.Completion);
        Assert.False(far.Completion.IsCompleted);
        Assert.True(far.Cancel());
        Assert.Equal(0, ((ThreadPoolEventLoop)Loop).FailedTurns);
    }

    [Fact]
    public async Task A_task_that_throws_does_not_stop_the_tasks_after_it()
    {
        var after = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Loop.Execute(() => throw new InvalidOperationException("a handler's bug"));
        Loop.Execute(() => after.TrySetResult());

        await Poll.Within(after.Task);
    }

    [Fact]
    public async Task In_a_turn_the_task_scheduler_is_the_loops_so_continuations_without_one_run_in_the_loop()
    {
        // As on DotNetty's own loops (ExecutorTaskScheduler): DotNetty's handlers and ours may start continuations with
        // no scheduler named, and expect them on the loop.
        var seen = new TaskCompletionSource<(bool DefaultScheduler, bool ContinuationInLoop)>(TaskCreationOptions.RunContinuationsAsynchronously);
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Loop.Execute(() =>
        {
            var isDefault = TaskScheduler.Current == TaskScheduler.Default;
            gate.Task.ContinueWith(_ => seen.TrySetResult((isDefault, Loop.InEventLoop)));
        });
        await Poll.Within(Task.Run(() => gate.SetResult()));

        var (defaultScheduler, continuationInLoop) = await Poll.Within(seen.Task);
        Assert.False(defaultScheduler);
        Assert.True(continuationInLoop);
        Assert.Equal(TaskScheduler.Default, TaskScheduler.Current);
    }

    [Fact]
    public async Task A_queue_longer_than_a_turn_is_run_in_several_turns_letting_other_work_in_between()
    {
        var loop = (ThreadPoolEventLoop)Loop;
        var release = new TaskCompletionSource();
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        loop.Execute(() => release.Task.Wait(Timeout));
        var turnOfEach = new List<long>(); // each task's turn; not thread-safe: the loop is what guards it
        for (var i = 0; i < 3 * ThreadPoolEventLoop.TasksPerTurn; i++)
        {
            loop.Execute(() =>
            {
                turnOfEach.Add(loop.Turns);
                if (turnOfEach.Count == 3 * ThreadPoolEventLoop.TasksPerTurn)
                {
                    done.TrySetResult();
                }
            });
        }

        var turnsBefore = loop.Turns;
        release.SetResult();
        await Poll.Within(done.Task);

        Assert.InRange(loop.Turns - turnsBefore, 3, 5);
        // No turn ran more than its share, and the queue filled some turn to it.
        Assert.Equal(ThreadPoolEventLoop.TasksPerTurn, turnOfEach.GroupBy(turn => turn).Max(turn => turn.Count()));
    }

    [Fact]
    public void A_task_queued_from_another_thread_always_wakes_the_loop()
    {
        // A lost wake-up (the loop's flag released after a writer looked at it, the writer's task left in the queue) shows
        // as a round that never completes. Rounds run for a fixed time and the count is reported: with five or six test
        // processes on 2 cores, runs reached 407 to 786, so the floor only checks that the test ran rounds at all.
        var watch = System.Diagnostics.Stopwatch.StartNew();
        var rounds = 0;
        using var ran = new SemaphoreSlim(0);
        while (watch.Elapsed < TimeSpan.FromSeconds(5))
        {
            Loop.Execute(() => ran.Release());
            Assert.True(ran.Wait(TimeSpan.FromSeconds(10)), $"round {rounds}: the task queued never ran");
            rounds++;
        }

        output.WriteLine($"{rounds} rounds in 5 s");
        Assert.True(rounds >= 100, $"only {rounds} rounds in 5 s");
    }
}
