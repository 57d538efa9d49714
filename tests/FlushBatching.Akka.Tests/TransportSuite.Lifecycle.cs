using System.Diagnostics;
using Akka.Actor;
using Akka.Cluster;
using FlushBatching.Akka.Tests.Support;
using FlushBatching.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>Clusters, and starting and stopping many times.</summary>
public abstract partial class TransportSuite
{
    [Fact]
    public async Task Three_nodes_form_a_cluster_and_see_a_leaving_member_removed()
    {
        const string cluster = "akka.actor.provider = cluster";
        await using var first = Nodes.Start("cluster", TransportClass, hocon: cluster);
        await using var second = Nodes.Start("cluster", TransportClass, hocon: cluster);
        await using var third = Nodes.Start("cluster", TransportClass, hocon: cluster);
        Node[] nodes = [first, second, third];
        foreach (var node in nodes)
        {
            Cluster.Get(node.System).Join(first.Address);
        }

        await Poll.Until(
            () => nodes.All(node => Cluster.Get(node.System).State.Members.Count(m => m.Status == MemberStatus.Up) == 3),
            "all three nodes to see three members up", seconds: 60);

        var removedAtFirst = new TaskCompletionSource<Address>(TaskCreationOptions.RunContinuationsAsynchronously);
        var removedAtSecond = new TaskCompletionSource<Address>(TaskCreationOptions.RunContinuationsAsynchronously);
        first.System.ActorOf(Props.Create(() => new MemberRemovedProbe(third.Address, removedAtFirst)));
        second.System.ActorOf(Props.Create(() => new MemberRemovedProbe(third.Address, removedAtSecond)));
        await Poll.Within(Cluster.Get(third.System).LeaveAsync(), patience: TimeSpan.FromSeconds(60));

        Assert.Equal(third.Address, await Poll.Within(removedAtFirst.Task, patience: TimeSpan.FromSeconds(60)));
        Assert.Equal(third.Address, await Poll.Within(removedAtSecond.Task, patience: TimeSpan.FromSeconds(60)));
    }

    [LinuxFact("counts /proc/self/fd")]
    public async Task Fifty_start_stop_cycles_leave_no_extra_threads_or_open_sockets()
    {
        await Cycle(); // the first cycle loads assemblies and warms the thread pool
        var threadsBefore = Threads();
        var socketsBefore = OpenSockets();

        for (var i = 0; i < 50; i++)
        {
            await Cycle();
        }

        // Each cycle starts two systems with a connection each way: a leak of one thread or socket per cycle
        // shows as 50 or more. The thread pool grows on a busy machine on its own and retires idle threads later,
        // so the count is awaited, not read once.
        await Poll.Until(() => Threads() <= threadsBefore + 10, $"threads back to at most {threadsBefore + 10}", seconds: 60);
        if (OperatingSystem.IsLinux())
        {
            await Poll.Until(() => OpenSockets() <= socketsBefore, $"open sockets back to at most {socketsBefore}");
        }
    }

    private async Task Cycle()
    {
        await using var a = Nodes.Start("cycle-a", TransportClass);
        await using var b = Nodes.Start("cycle-b", TransportClass);
        b.System.ActorOf(Props.Create<Echo>(), "echo");
        Assert.Equal("ping", await (await b.Resolve(a, "echo")).Ask<string>("ping", AskTimeout));
    }

    private static int Threads()
    {
        using var process = Process.GetCurrentProcess();
        return process.Threads.Count;
    }

    private static int OpenSockets() =>
        new DirectoryInfo("/proc/self/fd").EnumerateFileSystemInfos()
            .Count(fd => fd.LinkTarget?.StartsWith("socket:", StringComparison.Ordinal) == true);
}
