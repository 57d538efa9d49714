using DotNetty.Transport.Channels;
using FlushBatching.Akka.DotNettyStack;
using Xunit;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// DotNetty's own event loops, stopped as the DotNetty stack stops them, terminate even when tasks reach them from other
/// threads while they shut down: the case in which DotNetty 0.7.6's loop can run its wake-up task for ever.
/// </summary>
public sealed class EventLoopShutdownTests
{
    private static readonly TimeSpan LoopTimeout = TimeSpan.FromMilliseconds(100);

    [Fact]
    public void DotNettys_loop_state_is_where_the_shutdown_expects_it()
    {
        Assert.True(EventLoopShutdown.CanEndSpin, "SingleThreadEventExecutor.executionState is not an int field: a DotNetty loop that spins at shutdown would spin for ever");
    }

    [Fact]
    public void Where_DotNettys_loop_state_is_not_found_a_transport_on_dedicated_loops_warns_at_start_naming_the_key()
    {
        Assert.Null(EventLoopShutdown.StartWarning);

        // Another DotNetty: no such field, or one of another type.
        foreach (var state in new[] { null, typeof(EventLoopShutdownTests).GetField(nameof(LoopTimeout), System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Static) })
        {
            var warning = EventLoopShutdown.CannotEndSpin(state);
            Assert.NotNull(warning);
            Assert.Contains("'event-loop = dedicated'", warning);
            Assert.Contains("'event-loop = thread-pool'", warning);
        }
    }

    [Fact]
    public async Task DotNettys_own_loops_fed_from_other_threads_while_they_shut_down_all_terminate()
    {
        // Two threads queue empty tasks as fast as a busy peer's completions would, from before the shutdown until
        // after it, on each of several loops in turn. Without the end EventLoopShutdown puts to the cycle, 34 of 40
        // such loops kept spinning on a quiet machine, fewer on a loaded one (all of 6 terminated once under Stryker's
        // load): 20 loops make it red on either.
        const int Loops = 20;
        var stillRunning = new List<int>();
        for (var i = 0; i < Loops; i++)
        {
            var group = new MultithreadEventLoopGroup(1);
            var loop = group.Items.Single();
            using var stop = new CancellationTokenSource();
            var feeders = Enumerable.Range(0, 2).Select(_ => new Thread(() =>
            {
                while (!stop.IsCancellationRequested)
                {
                    loop.Execute(static () => { });
                    Thread.SpinWait(20);
                }
            })).ToList();
            feeders.ForEach(feeder => feeder.Start());
            await Task.Delay(5);

            var shutdown = EventLoopShutdown.ShutdownAsync(group, LoopTimeout);
            await Task.Delay(20);
            stop.Cancel();
            feeders.ForEach(feeder => feeder.Join());

            // The timeout, the shutdown's grace and a margin for a loaded machine: a spinning loop never gets there. The
            // shutdown's task completes only once the loop has terminated.
            if (await Task.WhenAny(shutdown, Task.Delay(TimeSpan.FromSeconds(5))) != shutdown || !loop.IsTerminated)
            {
                stillRunning.Add(i);
            }
        }

        Assert.Empty(stillRunning);
    }
}
