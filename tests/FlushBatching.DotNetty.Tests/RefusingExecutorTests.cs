using DotNetty.Common.Concurrency;
using FlushBatching.Batching;
using Microsoft.Extensions.Time.Testing;

namespace FlushBatching.DotNetty.Tests;

/// <summary>
/// The handler's and the writer's work on an executor that refuses tasks as it terminates, as
/// <see cref="IEventExecutor"/>s other than DotNetty 0.7.6's own loops may (<see cref="RejectedExecutionException"/>):
/// nothing is lost without a word, and nothing throws where no one catches it.
/// </summary>
public sealed class RefusingExecutorTests
{
    private readonly RefusingExecutor _executor = new();

    [Fact]
    public void A_loop_task_refused_runs_its_fallback_inside_the_call_and_never_its_task()
    {
        var ran = new List<string>();

        LoopTask.Execute(_executor, _ => ran.Add("task"), _ => ran.Add("fallback"), new object());

        Assert.Equal(["fallback"], ran);
    }

    [Fact]
    public void An_interval_timer_whose_executor_refuses_its_task_throws_nothing_from_the_timer()
    {
        // The timer's callback runs on a timer thread, where an exception would end the process; the fake clock runs it
        // inside Advance, where it would fail this test.
        var clock = new FakeTimeProvider();
        var due = 0;
        var timer = new IntervalTimer(clock, () => due++);

        timer.Arm(_executor, TimeSpan.FromMilliseconds(40));
        clock.Advance(TimeSpan.FromMilliseconds(40));

        Assert.Equal(1, _executor.Refused);
        Assert.Equal(0, due);
    }

    [Fact]
    public void A_burst_end_check_its_executor_refuses_ends_the_burst_at_once()
    {
        var policy = new FlushPolicy(BatchingSettings.Default, TimeProvider.System);
        var ended = 0;
        var check = new BurstEndCheck(policy, () => ended++);
        policy.OnWrite(10);

        check.CountWrite();
        check.QueueOn(_executor);

        Assert.Equal(1, ended);
        Assert.Equal(1, _executor.Refused);
    }

    // An executor that is terminating: it takes no task, and says so.
    private sealed class RefusingExecutor : AbstractEventExecutor
    {
        public int Refused { get; private set; }

        public override bool IsShuttingDown => false;

        public override Task TerminationCompletion => Task.CompletedTask;

        public override bool IsShutdown => false;

        public override bool IsTerminated => false;

        public override bool IsInEventLoop(Thread thread) => false;

        public override void Execute(IRunnable task)
        {
            Refused++;
            throw new RejectedExecutionException();
        }

        public override Task ShutdownGracefullyAsync(TimeSpan quietPeriod, TimeSpan timeout) => Task.CompletedTask;

        protected override IEnumerable<IEventExecutor> GetItems() => [this];
    }
}
