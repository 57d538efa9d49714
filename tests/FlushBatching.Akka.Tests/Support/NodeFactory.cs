using Akka.Actor.Setup;
using Akka.Configuration;

namespace FlushBatching.Akka.Tests.Support;

/// <summary>
/// <see cref="Node"/>s of one variant of a stack: <paramref name="StackSection"/> (such as <c>event-loop = dedicated</c>)
/// goes first in every node's transport section. Stock nodes get it too, and ignore it.
/// </summary>
/// <param name="StackSection">Lines for inside the akka.remote.dot-netty.tcp section of every node.</param>
public sealed record NodeFactory(string StackSection)
{
    /// <inheritdoc cref="Node.Start(string, string, string, string)"/>
    public Node Start(string name, string transportClass, string transportHocon = "", string hocon = "") =>
        Node.Start(name, transportClass, StackSection + "\n" + transportHocon, hocon);

    /// <inheritdoc cref="Node.Start(string, string, Setup[], string)"/>
    public Node Start(string name, string transportClass, Setup[] setups, string transportHocon = "") =>
        Node.Start(name, transportClass, setups, StackSection + "\n" + transportHocon);

    /// <inheritdoc cref="Node.ConfigFor"/>
    public Config ConfigFor(string transportClass, string transportHocon = "", string hocon = "") =>
        Node.ConfigFor(transportClass, StackSection + "\n" + transportHocon, hocon);
}
