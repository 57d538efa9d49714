using Akka.Actor;
using Akka.Configuration;

namespace FlushBatching.Akka.Tests;

/// <summary>What each stack does with stock's <c>server-socket-worker-pool</c> and <c>client-socket-worker-pool</c>.</summary>
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
            new BatchingTcpTransport(system, ConfigurationFactory.ParseString("server-socket-worker-pool.pool-size-min = 0")));
    }
}
