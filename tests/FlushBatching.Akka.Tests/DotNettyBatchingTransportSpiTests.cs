using System.Diagnostics;
using Akka.Event;
using FlushBatching.Akka.DotNettyStack;
using FlushBatching.Akka.Tests.Support;
using FlushBatching.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// The Transport SPI suite against <see cref="DotNettyBatchingTransport"/>, and what only its event loops can hold up, on
/// each kind of event loop it offers.
/// </summary>
public abstract class DotNettyBatchingTransportSpiTests : TransportSpiSuite
{
    protected override string TransportClass => Node.DotNettyBatching;

    // DotNetty's own loop cannot terminate while a task holds its thread; a thread-pool loop counts as terminated at its
    // shutdown's timeout, the thread being the pool's.
    private protected abstract bool ALoopHeldByATaskOutlivesItsShutdown { get; }

    [Fact]
    public async Task A_shutdown_held_up_by_a_busy_event_loop_goes_on_at_its_bounds_and_logs_what_is_still_open()
    {
        var (_, serverAddress, _) = await Listen();
        var (client, _, _) = await Listen();
        var outbound = (BatchingAssociationHandle)await client.Associate(serverAddress);

        // The association's event loop is held (as by a handler that blocks), so nothing queued on it runs: not the
        // close, not the abort, not the loop's own shutdown.
        using var release = new ManualResetEventSlim();
        var held = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        ((DotNettyConnection)outbound.Connection).EventLoop.Execute(() =>
        {
            held.SetResult();
            release.Wait();
        });
        await Poll.Within(held.Task);
        try
        {
            // The grace for connections still sending (0.5 s), then two steps of 2 s: releasing the aborted connection
            // and stopping the stack. A margin for a shared machine.
            var watch = Stopwatch.StartNew();
            var shutdown = client.Shutdown();
            Assert.True(await Task.WhenAny(shutdown, Task.Delay(TimeSpan.FromSeconds(15))) == shutdown, "shutdown waited on a held event loop");
            Assert.True(watch.Elapsed < TimeSpan.FromSeconds(10), $"shutdown took {watch.Elapsed.TotalSeconds:F1} s");

            // Akka's logging is asynchronous: the lines are awaited, not read once.
            bool Warned(string what) => Logs.Any(e => e.LogLevel() == LogLevel.WarningLevel && e.ToString()!.Contains(what));
            await Poll.Until(() => Warned("did not release aborted connections within 2s"), "a WARNING naming the connection still open");
            if (ALoopHeldByATaskOutlivesItsShutdown)
            {
                await Poll.Until(() => Warned("did not stop the DotNetty stack within 2s") && Warned("client event loops not terminated"), "a WARNING naming the event loops still running");
            }
            else
            {
                Assert.DoesNotContain(Logs, e => e.ToString()!.Contains("event loops not terminated"));
            }
        }
        finally
        {
            release.Set();
        }
    }

    /// <summary>On <see cref="ThreadPoolEventLoop"/>s, the default.</summary>
    public sealed class OnThreadPoolLoops : DotNettyBatchingTransportSpiTests
    {
        protected override string StackSection => "event-loop = thread-pool";

        private protected override bool ALoopHeldByATaskOutlivesItsShutdown => false;
    }

    /// <summary>On DotNetty's own loops, a thread each.</summary>
    public sealed class OnDedicatedLoops : DotNettyBatchingTransportSpiTests
    {
        protected override string StackSection => "event-loop = dedicated";

        private protected override bool ALoopHeldByATaskOutlivesItsShutdown => true;
    }
}
