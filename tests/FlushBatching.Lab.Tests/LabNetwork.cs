namespace FlushBatching.Lab.Tests;

/// <summary>
/// Where the lab's nodes live and how their links fail: one network namespace per node on a bridge where the lab runs
/// as root and <c>ip netns</c> works (<see cref="NamespaceNetwork"/>), else every node on 127.0.0.1
/// (<see cref="LoopbackNetwork"/>), where no link can be cut or throttled: the scenarios that need that are skipped there.
/// </summary>
public abstract class LabNetwork : IDisposable
{
    /// <summary>Namespaces where the machine allows them, loopback otherwise; says which on standard output.</summary>
    public static LabNetwork Create(int nodes, int subnet)
    {
        if (NamespaceNetwork.IsAvailable(out var why))
        {
            return new NamespaceNetwork(nodes, subnet);
        }

        Console.WriteLine($"######## lab on loopback: {why}; partition and slow-link scenarios are skipped ########");
        return new LoopbackNetwork(subnet);
    }

    /// <summary>The address node <paramref name="node"/> binds and is reached by.</summary>
    public abstract string HostOf(int node);

    public abstract int PortOf(int node);

    /// <summary>The command that starts <paramref name="arguments"/> as node <paramref name="node"/>.</summary>
    public abstract (string File, string Arguments) Command(int node, string arguments);

    /// <summary>Cuts node <paramref name="node"/> off: its packets vanish, no reset.</summary>
    public abstract void Cut(int node);

    public abstract void Heal(int node);

    /// <summary>Puts node <paramref name="node"/> behind a token bucket of <paramref name="rate"/> (tc notation, such as 10mbit), both ways.</summary>
    public abstract void Throttle(int node, string rate);

    public abstract void Unthrottle(int node);

    public abstract void Dispose();
}
