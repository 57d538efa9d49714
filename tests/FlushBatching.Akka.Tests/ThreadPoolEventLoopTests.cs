using System.Collections.Concurrent;
using DotNetty.Transport.Channels;
using Xunit;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// The DotNetty stack's event loop on the thread pool keeps DotNetty's promises: one task at a time, in order, on a
/// thread that knows it is in the loop; scheduled tasks once due, cancelled ones never; a shutdown that ends.
/// </summary>
public sealed class ThreadPoolEventLoopTests : IAsyncLifetime
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
        await done.Task.WaitAsync(Timeout);

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

        await done.Task.WaitAsync(Timeout);

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

        await Task.WhenAll(scheduled.Select(task => task.Completion)).WaitAsync(Timeout);

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
        await later.Completion.WaitAsync(Timeout);

        Assert.False(ran);
        Assert.True(cancelled.Completion.IsCanceled);
    }

    [Fact]
    public async Task A_shutdown_cancels_what_is_scheduled_then_and_after_and_ends_while_tasks_queued_after_it_still_run()
    {
        var scheduled = Loop.Schedule(() => { }, TimeSpan.FromMinutes(10));

        await _group.ShutdownGracefullyAsync(TimeSpan.Zero, Timeout).WaitAsync(Timeout);
        var after = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Loop.Execute(() => after.TrySetResult());
        var scheduledAfter = Loop.Schedule(() => { }, TimeSpan.FromMinutes(10));

        Assert.True(Loop.IsShuttingDown);
        Assert.True(Loop.IsTerminated);
        Assert.True(scheduled.Completion.IsCanceled);
        await after.Task.WaitAsync(Timeout);
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => scheduledAfter.Completion.WaitAsync(Timeout));
    }
}
