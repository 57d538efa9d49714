using FlushBatching.Tests.Support;
using Xunit.Abstractions;

namespace FlushBatching.Lab.Tests;

/// <summary>
/// The fault lab's scenarios: Akka.Cluster nodes as separate processes on this project's transports and stock, with
/// sequenced traffic between every pair, under a steady run, a partition, a freeze, a crash and a slow link, and
/// with TLS. Each scenario is bounded in time and removes its processes and namespaces even when it fails.
/// </summary>
public sealed class FaultScenarios(ITestOutputHelper output)
{
    private const string Ours = "flushbatching";
    private const string OursDotNetty = "flushbatching-dotnetty";
    private const string OursDotNettyDedicated = "flushbatching-dotnetty-dedicated";
    private const string Stock = "stock";

    private static readonly TimeSpan Formation = TimeSpan.FromSeconds(90);
    private static readonly TimeSpan Recovery = TimeSpan.FromSeconds(60);
    private static readonly TimeSpan Fault = TimeSpan.FromSeconds(20);

    /// <summary>
    /// Four nodes: the seed and the victim on this project's core transport, one on the DotNetty stack (its loops on the
    /// thread pool, or DotNetty's own: see <see cref="Mixed4With"/>), one stock.
    /// </summary>
    private static readonly (string, string)[] Mixed4 = Mixed4With(OursDotNetty);

    [Fact]
    public async Task Steady_five_nodes_lose_and_reorder_nothing_and_memory_stays_flat() =>
        await Steady(subnet: 1, TimeSpan.FromSeconds(60), tls: false);

    [LinuxFact(IsolatedStore.Reason)]
    public async Task Steady_with_tls_loses_and_reorders_nothing() =>
        await Steady(subnet: 2, TimeSpan.FromSeconds(30), tls: true);

    [RealLinksFact]
    public async Task Partition_one_node_is_marked_unreachable_and_comes_back_with_traffic_in_order() =>
        await Partition(subnet: 3, tls: false);

    [RealLinksFact]
    public async Task Partition_with_tls_heals_with_traffic_in_order() =>
        await Partition(subnet: 4, tls: true);

    [Fact]
    public async Task Freeze_one_node_for_twenty_seconds_and_it_comes_back_with_traffic_in_order()
    {
        using var lab = await Mixed4WithTraffic(5);
        var victim = lab.Nodes[3];

        victim.Freeze();
        await lab.WaitUntil(() => Others(lab, victim).Any(n => n.Latest!.Unreachable.Contains(victim.Address)), Fault, "a survivor to mark the frozen node unreachable");
        await lab.Run(Fault - TimeSpan.FromSeconds(5));
        AssertBoundedDuringFault(lab, victim);
        victim.Thaw();

        await HealedAndFlowing(lab);
        Log(lab);
    }

    [Fact]
    public async Task Crash_one_node_and_its_restart_on_the_same_address_rejoins_while_survivors_serve()
    {
        using var lab = await Mixed4WithTraffic(6);
        var victim = lab.Nodes[3];
        var oldUid = victim.Latest!.Members.Single(m => m.Address == victim.Address).Uid;

        var survivors = Others(lab, victim).ToList();
        var disassociations = survivors.ToDictionary(n => n.Name, n => n.Latest!.Peer(victim.Address).Disassociations);
        victim.Crash();

        // The dead peer's connections end at once (the kernel closes them); no survivor may keep its association open.
        await lab.WaitUntil(
            () => survivors.All(n => n.Latest!.Peer(victim.Address).Disassociations > disassociations[n.Name]),
            TimeSpan.FromSeconds(15),
            "every survivor to see its association with the crashed node end");
        var before = lab.ReceivedNow();
        await lab.Run(TimeSpan.FromSeconds(10));
        lab.AssertAlive();
        foreach (var (from, to) in from a in survivors from b in survivors where a != b select (a, b))
        {
            Assert.True(Lab.Received(from, to) > before[(from.Name, to.Name)], $"{to.Name} stopped receiving from {from.Name} while {victim.Name} was down.{Environment.NewLine}{lab.Describe()}");
        }

        victim.Restart();
        await lab.WaitUntil(
            () => lab.Nodes.All(n => n.Latest is { } r && r.SeesAllUp(lab.Nodes.Count)
                && r.Members.Single(m => m.Address == victim.Address).Uid != oldUid),
            Recovery,
            "every node to see the restarted node Up as a new incarnation");
        await lab.AssertTrafficFlows(lab.ReceivedNow(), TimeSpan.FromSeconds(30));
        lab.AssertOrderAndContent();
        Log(lab);
    }

    [RealLinksTheory]
    [InlineData(Ours)]
    [InlineData(OursDotNetty)]
    [InlineData(OursDotNettyDedicated)]
    [InlineData(Stock)]
    public async Task Slow_link_under_a_flood_keeps_memory_bounded_without_an_error_storm(string transport)
    {
        // Two nodes, as fast as a window of 256 allows (about 3.5 MB, above the 1 MiB high-water mark, so writes are refused), messages up to near the frame limit, behind 10 Mbit/s both ways.
        using var lab = new Lab(7, [("n1", transport), ("n2", transport)], "--rate 0 --window 256");
        var slow = lab.Nodes[1];
        await lab.AllUp(Formation);
        lab.Network.Throttle(slow.Index, "10mbit");
        await lab.Run(TimeSpan.FromSeconds(10));
        var warningsBefore = lab.Nodes.Sum(n => n.Latest!.Warnings + n.Latest.Errors);
        var memoryBefore = lab.Nodes.ToDictionary(n => n.Name, n => n.Latest!.WorkingSetMb);
        var received = lab.ReceivedNow();
        await lab.Run(TimeSpan.FromSeconds(30));

        foreach (var node in lab.Nodes)
        {
            var now = node.Latest!.WorkingSetMb;
            Assert.True(now < (memoryBefore[node.Name] * 1.5) + 64, $"{node.Name}'s working set grew from {memoryBefore[node.Name]:N0} MB to {now:N0} MB under the flood.{Environment.NewLine}{lab.Describe()}");
        }

        if (transport != Stock)
        {
            // The flood must have pushed the connections past their high-water mark: back-pressure was exercised.
            Assert.True(lab.Nodes.Sum(n => n.Latest!.WritesRefused) > 0, $"No write was refused under the flood.{Environment.NewLine}{lab.Describe()}");
        }

        var warnings = lab.Nodes.Sum(n => n.Latest!.Warnings + n.Latest.Errors) - warningsBefore;
        // A few "heartbeat interval is growing too large" are expected behind megabytes queued on 10 Mbit/s; a storm is hundreds.
        Assert.True(warnings < 40, $"{warnings} warnings and errors in 30 s of flood.{Environment.NewLine}{lab.Describe()}");
        Assert.All(lab.Pairs(), p => Assert.True(Lab.Received(p.From, p.To) > received[(p.From.Name, p.To.Name)], $"{p.To.Name} received nothing from {p.From.Name} over the slow link."));

        lab.Network.Unthrottle(slow.Index);
        await lab.AllUp(Recovery);
        lab.AssertOrderAndContent();
        Log(lab);
    }

    private static IEnumerable<LabNode> Others(Lab lab, LabNode node) => lab.Nodes.Where(n => n != node);

    // A node's arguments for mutual TLS with a certificate from the authority, or none without one.
    private static string TlsArguments(TestCertificateAuthority? authority) =>
        authority is null ? "" : $"--tls-pfx \"{authority.IssueForLoopback()}\" --tls-password {TestCertificateAuthority.Password}";

    private static (string, string)[] Mixed4With(string dotNetty) => [("n1", Ours), ("n2", Stock), ("n3", dotNetty), ("n4", Ours)];

    // The four-node cluster of the fault scenarios, formed, with 10 s of traffic behind it; n4 is the victim.
    private static async Task<Lab> Mixed4WithTraffic(int subnet, string arguments = "", (string, string)[]? nodes = null)
    {
        var lab = new Lab(subnet, nodes ?? Mixed4, arguments);
        try
        {
            await lab.AllUp(Formation);
            await lab.Run(TimeSpan.FromSeconds(10));
            return lab;
        }
        catch
        {
            lab.Dispose();
            throw;
        }
    }

    private async Task Steady(int subnet, TimeSpan duration, bool tls)
    {
        using var authority = tls ? new TestCertificateAuthority(trusted: true) : null;
        var arguments = TlsArguments(authority);
        // Both stacks, the DotNetty one on both kinds of event loop, beside two stock nodes.
        using var lab = new Lab(subnet, [("n1", Ours), ("n2", OursDotNettyDedicated), ("n3", OursDotNetty), ("n4", Stock), ("n5", Stock)], arguments);
        await lab.AllUp(Formation);
        var third = duration / 3;
        await lab.Run(third);
        var memoryAtThird = lab.Nodes.ToDictionary(n => n.Name, n => n.Latest!.WorkingSetMb);
        var received = lab.ReceivedNow();
        await lab.Run(duration - third);

        lab.AssertOrderAndContent();
        foreach (var to in lab.Nodes)
        {
            foreach (var from in Others(lab, to))
            {
                var counters = to.Latest!.Peer(from.Address);
                Assert.True(counters.Gaps == 0, $"{to.Name} lost {counters.Missing} messages from {from.Name} in a steady run.{Environment.NewLine}{lab.Describe()}");
                Assert.True(Lab.Received(from, to) > received[(from.Name, to.Name)], $"{to.Name} stopped receiving from {from.Name}.");
            }

            var now = to.Latest!.WorkingSetMb;
            Assert.True(now < (memoryAtThird[to.Name] * 1.4) + 48, $"{to.Name}'s working set grew from {memoryAtThird[to.Name]:N0} MB to {now:N0} MB in a steady run.{Environment.NewLine}{lab.Describe()}");
        }

        Log(lab);
    }

    private async Task Partition(int subnet, bool tls)
    {
        using var authority = tls ? new TestCertificateAuthority(trusted: true) : null;
        var arguments = TlsArguments(authority);
        // With TLS, the DotNetty node runs DotNetty's own loops: TLS on them is how stock runs it.
        using var lab = await Mixed4WithTraffic(subnet, arguments, tls ? Mixed4With(OursDotNettyDedicated) : null);
        var victim = lab.Nodes[3];

        lab.Network.Cut(victim.Index);

        await lab.WaitUntil(() => Others(lab, victim).All(n => n.Latest!.Unreachable.Contains(victim.Address)), Fault, "every survivor to mark the cut-off node unreachable");
        await lab.Run(Fault - TimeSpan.FromSeconds(5));
        AssertBoundedDuringFault(lab, victim);
        lab.Network.Heal(victim.Index);

        await HealedAndFlowing(lab);
        Log(lab);
    }

    private static void AssertBoundedDuringFault(Lab lab, LabNode victim)
    {
        lab.AssertAlive();
        foreach (var node in Others(lab, victim))
        {
            var peak = node.History.Max(r => r.WorkingSetMb);
            Assert.True(peak < 1024, $"{node.Name}'s working set reached {peak:N0} MB during the fault.{Environment.NewLine}{lab.Describe()}");
        }
    }

    private static async Task HealedAndFlowing(Lab lab)
    {
        await lab.AllUp(Recovery);
        await lab.AssertTrafficFlows(lab.ReceivedNow(), TimeSpan.FromSeconds(30));
        var gaps = lab.Pairs().ToDictionary(p => (p.From.Name, p.To.Name), p => p.To.Latest!.Peer(p.From.Address).Gaps);
        await lab.Run(TimeSpan.FromSeconds(5));
        lab.AssertOrderAndContent();
        foreach (var (from, to) in lab.Pairs())
        {
            Assert.True(to.Latest!.Peer(from.Address).Gaps == gaps[(from.Name, to.Name)], $"{to.Name} lost messages from {from.Name} after the cluster had healed.{Environment.NewLine}{lab.Describe()}");
        }
    }

    private void Log(Lab lab) => output.WriteLine(lab.Describe());
}
