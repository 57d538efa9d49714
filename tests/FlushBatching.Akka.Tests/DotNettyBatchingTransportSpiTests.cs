using FlushBatching.Akka.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>The Transport SPI suite against <see cref="DotNettyBatchingTransport"/>.</summary>
public sealed class DotNettyBatchingTransportSpiTests : TransportSpiSuite
{
    protected override string TransportClass => Node.DotNettyBatching;
}
