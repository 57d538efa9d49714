using FlushBatching.Akka.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>The shared transport suite against <see cref="DotNettyBatchingTransport"/>.</summary>
public sealed class DotNettyBatchingTransportTests : TransportSuite
{
    protected override string TransportClass => Node.DotNettyBatching;
}
