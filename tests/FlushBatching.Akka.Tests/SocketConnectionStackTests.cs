using FlushBatching.Akka.SocketsStack;
using FlushBatching.Tcp;
using FlushBatching.Tests.Support;

using Xunit.Abstractions;

namespace FlushBatching.Akka.Tests;

/// <summary>The stack suite on the core's sockets.</summary>
public sealed class SocketConnectionStackTests(ITestOutputHelper output) : ConnectionStackSuite(output)
{
    private readonly LeakCheckingPool _pool = new();

    private protected override IConnectionStack CreateStack(ConnectionSettings settings) => new SocketConnectionStack(settings);

    private protected override long HighWaterMarkOf(ITransportConnection connection) => ((SocketTransportConnection)connection).HighWaterMark;

    private protected override ConnectionSettings WithHoldingsChecked(ConnectionSettings settings) => settings.WithBufferPool(_pool);

    // The chunks go back as the send loop ends, before the connection's Completion.
    private protected override void AssertNothingHeld(ITransportConnection connection) => _pool.AssertAllReturned();
}
