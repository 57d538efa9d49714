using FlushBatching.Tcp;

namespace FlushBatching.Akka.Tests;

/// <summary>The stack suite on DotNetty.</summary>
public sealed class DotNettyConnectionStackTests : ConnectionStackSuite
{
    private protected override IConnectionStack CreateStack(ConnectionSettings settings) => new DotNettyConnectionStack(settings, 1, 1);
}
