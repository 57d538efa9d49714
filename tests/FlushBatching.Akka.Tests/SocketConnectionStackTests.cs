using FlushBatching.Tcp;

namespace FlushBatching.Akka.Tests;

/// <summary>The stack suite on the core's sockets.</summary>
public sealed class SocketConnectionStackTests : ConnectionStackSuite
{
    private protected override IConnectionStack CreateStack(ConnectionSettings settings) => new SocketConnectionStack(settings);
}
