using Akka.Actor;
using Akka.Configuration;
using Akka.Event;
using FlushBatching.Akka.DotNettyStack;
using FlushBatching.DotNetty;

namespace FlushBatching.Akka;

/// <summary>
/// FlushBatching's Akka.Remote transport on DotNetty's I/O: the stock pipeline's shape, with
/// <see cref="BatchingWriterHandler"/> where stock has its flush-consolidation handler, configured by the same section
/// and <c>batching { }</c> block as <see cref="BatchingTcpTransport"/>.
/// </summary>
/// <remarks>
/// <para>Enable it with <c>akka.remote.dot-netty.tcp.transport-class = "FlushBatching.Akka.DotNettyBatchingTransport, FlushBatching.Akka"</c>.</para>
/// <para>
/// Pick it to keep Akka.Remote's I/O on DotNetty while gaining every batching key, or to tell how much of
/// <see cref="BatchingTcpTransport"/>'s gain comes from batching and how much from the core's I/O. Each write queues
/// Akka's payload as it is; one hand-off per idle-to-busy change hands what is queued to the batching handler, which
/// writes each length prefix, copies small frames once into a combine buffer and passes large ones through uncopied.
/// Accepted channels run on <c>server-socket-worker-pool</c> event loops, outbound ones on
/// <c>client-socket-worker-pool</c> event loops, sized as stock sizes them; <c>event-loop</c> says whether they borrow
/// the .NET thread pool's threads (<c>thread-pool</c>, the default) or keep one each (<c>dedicated</c>, as stock).
/// </para>
/// </remarks>
public sealed class DotNettyBatchingTransport : FlushBatchingTransport
{
    /// <summary>Created by Akka.Remote through reflection, with the transport's own config section.</summary>
    /// <param name="system">The actor system the transport serves.</param>
    /// <param name="config">The transport's section, such as <c>akka.remote.dot-netty.tcp</c>.</param>
    /// <exception cref="InvalidSettingException">A key has a bad value; the message names the key, the value and what is allowed.</exception>
    public DotNettyBatchingTransport(ActorSystem system, Config config)
        : base(system, config, settings => new DotNettyConnectionStack(settings.Connection, settings.ServerWorkerPoolSize, settings.ClientWorkerPoolSize, settings.EventLoop))
    {
        if (Settings.EventLoop == EventLoopKind.Dedicated && EventLoopShutdown.StartWarning is { } warning)
        {
            Log.Warning(warning);
        }
    }
}
