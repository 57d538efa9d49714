using Akka.Actor;
using Akka.Configuration;
using FlushBatching.Akka.SocketsStack;

namespace FlushBatching.Akka;

/// <summary>
/// FlushBatching's Akka.Remote transport on the core's framed connections (sockets and System.IO.Pipelines): each
/// message copied once, prefix and payload together, into pooled chunks that many frames share; no Task per message;
/// each batch in one gathered send. The default choice; the DotNetty stack is close to it under load and ahead in some
/// rows (docs/choosing-a-transport.md).
/// </summary>
/// <remarks>
/// Enable it with one line in the existing section:
/// <code>akka.remote.dot-netty.tcp.transport-class = "FlushBatching.Akka.BatchingTcpTransport, FlushBatching.Akka"</code>
/// The section's other keys keep their meaning, and <c>batching.max-pending-bytes</c> and
/// <c>batching.flush-interval</c> now work; a few values stock takes are refused at start, naming the key and the
/// range, and a few keys stock reads do nothing here (docs/configuration.md gives each key against stock). Keys the section leaves out take the defaults of the package's
/// <c>reference.conf</c>. Sends and receives run on the .NET thread pool: the stack has no threads of its own, so
/// <c>server-socket-worker-pool</c> and <c>client-socket-worker-pool</c> are read, checked and not used.
/// </remarks>
public sealed class BatchingTcpTransport : FlushBatchingTransport
{
    /// <summary>Created by Akka.Remote through reflection, with the transport's own config section.</summary>
    /// <param name="system">The actor system the transport serves.</param>
    /// <param name="config">The transport's section, such as <c>akka.remote.dot-netty.tcp</c>.</param>
    /// <exception cref="InvalidSettingException">A key has a bad value; the message names the key, the value and what is allowed.</exception>
    public BatchingTcpTransport(ActorSystem system, Config config)
        : base(system, config, settings => new SocketConnectionStack(settings.Connection))
    {
    }
}
