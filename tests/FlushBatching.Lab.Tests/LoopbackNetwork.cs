namespace FlushBatching.Lab.Tests;

/// <summary>Every node on 127.0.0.1, each on its own port; links cannot fail.</summary>
public sealed class LoopbackNetwork(int subnet) : LabNetwork
{
    public override string HostOf(int node) => "127.0.0.1";

    public override int PortOf(int node) => 20000 + (subnet * 16) + node;

    public override (string File, string Arguments) Command(int node, string arguments) => ("dotnet", arguments);

    public override void Cut(int node) => throw new NotSupportedException("Links on loopback cannot be cut.");

    public override void Heal(int node) => throw new NotSupportedException("Links on loopback cannot be cut.");

    public override void Throttle(int node, string rate) => throw new NotSupportedException("Links on loopback cannot be throttled.");

    public override void Unthrottle(int node) => throw new NotSupportedException("Links on loopback cannot be throttled.");

    public override void Dispose()
    {
    }
}
