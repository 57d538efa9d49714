using FlushBatching.Akka.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>The shared transport suite against <see cref="BatchingTcpTransport"/>.</summary>
public sealed class BatchingTcpTransportTests : TransportSuite
{
    protected override string TransportClass => Node.BatchingTcp;

    protected override string ListeningTags => "flushbatching.stack=sockets";
}
