using FlushBatching.Akka.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>The Transport SPI suite against <see cref="BatchingTcpTransport"/>.</summary>
public sealed class BatchingTcpTransportSpiTests : TransportSpiSuite
{
    protected override string TransportClass => Node.BatchingTcp;
}
