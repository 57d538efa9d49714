namespace FlushBatching.Akka.Hosting;

/// <summary>The I/O stack under the FlushBatching transport; both speak stock's wire format.</summary>
public enum TransportStack
{
    /// <summary><see cref="BatchingTcpTransport"/>: the core's sockets and pipelines. The default; the two stacks are close under load (docs/choosing-a-transport.md).</summary>
    Sockets,

    /// <summary><see cref="DotNettyBatchingTransport"/>: DotNetty's event loops with <c>BatchingWriterHandler</c>, as stock runs.</summary>
    DotNetty,
}
