using System.Net;
using Akka.Actor;
using Akka.Configuration;
using FlushBatching.Akka.DotNettyStack;
using FlushBatching.Akka.SocketsStack;
using FlushBatching.Tcp;
using FlushBatching.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// What each stack does with stock's <c>server-socket-worker-pool</c> and <c>client-socket-worker-pool</c>, and with
/// <c>event-loop</c>, which says what runs the DotNetty stack's loops.
/// </summary>
public sealed class WorkerPoolTests
{
    private const string Pools = """
        server-socket-worker-pool { pool-size-min = 3, pool-size-max = 3 }
        client-socket-worker-pool { pool-size-min = 1, pool-size-max = 1 }
        """;

    [Fact]
    public async Task The_DotNetty_stack_runs_as_many_event_loops_as_the_worker_pool_keys_say()
    {
        using var system = ActorSystem.Create("pools", "akka.actor.provider = local");
        var transport = new DotNettyBatchingTransport(system, ConfigurationFactory.ParseString(Pools));
        try
        {
            Assert.Equal((3, 1), Assert.IsType<DotNettyConnectionStack>(transport.Stack).EventLoops);
        }
        finally
        {
            await transport.Shutdown();
        }
    }

    [Fact]
    public void The_sockets_stack_runs_on_the_thread_pool_and_only_checks_the_worker_pool_keys()
    {
        using var system = ActorSystem.Create("pools", "akka.actor.provider = local");

        Assert.IsType<SocketConnectionStack>(new BatchingTcpTransport(system, ConfigurationFactory.ParseString(Pools)).Stack);
        Assert.Throws<InvalidSettingException>(() =>
            new BatchingTcpTransport(system, ConfigurationFactory.ParseString("server-socket-worker-pool.pool-size-max = 0")));
    }

    [Theory]
    [InlineData("", false)]
    [InlineData("event-loop = thread-pool", false)]
    [InlineData("event-loop = dedicated", true)]
    [InlineData("event-loop = DEDICATED", true)]
    public async Task The_DotNetty_stack_runs_its_channels_on_the_thread_pool_or_on_threads_of_its_own_as_event_loop_says(string setting, bool ownThreads)
    {
        using var system = ActorSystem.Create("loops", "akka.actor.provider = local");
        var settings = BatchingTransportSettings.Create(ConfigurationFactory.ParseString(setting));
        var stack = new DotNettyConnectionStack(settings.Connection, 1, 1, settings.EventLoop);
        try
        {
            ITransportConnection? inbound = null;
            var endpoint = await stack.ListenAsync(new IPEndPoint(IPAddress.Loopback, 0), null, c => inbound = c, _ => { });
            var outbound = (DotNettyConnection)await stack.ConnectAsync(endpoint, settings.Connection);

            var onPoolThread = new TaskCompletionSource<bool>();
            outbound.EventLoop.Execute(() => onPoolThread.SetResult(Thread.CurrentThread.IsThreadPoolThread));

            Assert.Equal(!ownThreads, await Poll.Within(onPoolThread.Task));
            Assert.Contains(ownThreads ? "event-loop = dedicated" : "event-loop = thread-pool", ((IConnectionStack)stack).Description);
        }
        finally
        {
            // Bounded, so that a loop that never terminates fails this test rather than hanging CI: one of DotNetty's
            // own loops spun for ever in about 1 of 20 runs under load before EventLoopShutdown (EventLoopShutdownTests).
            await stack.StopListeningAsync();
            var stopping = stack.StopAsync();
            Assert.Same(stopping, await Task.WhenAny(stopping, Task.Delay(TimeSpan.FromSeconds(5))));
        }
    }

    [Fact]
    public void An_event_loop_other_than_thread_pool_or_dedicated_is_refused_naming_the_key_and_the_choices()
    {
        var e = Assert.Throws<InvalidSettingException>(() => BatchingTransportSettings.Create(ConfigurationFactory.ParseString("event-loop = fibers")));

        Assert.Equal("event-loop", e.Key);
        Assert.Contains("fibers", e.Message);
        Assert.Contains("thread-pool or dedicated", e.Message);
    }
}
