using System.Text;

namespace FlushBatching.Lab.Tests;

/// <summary>A cluster of lab nodes on their own network, the first one the seed; waits and checks over their reports.</summary>
public sealed class Lab : IDisposable
{
    private readonly List<LabNode> _nodes = [];

    public Lab(int subnet, (string Name, string Transport)[] nodes, string nodeArguments = "")
    {
        Network = LabNetwork.Create(nodes.Length, subnet);
        try
        {
            var seed = LabNode.AddressOf(Network, 0, nodeArguments);
            for (var i = 0; i < nodes.Length; i++)
            {
                _nodes.Add(new LabNode(Network, i, nodes[i].Name, nodes[i].Transport, seed, nodeArguments));
            }
        }
        catch
        {
            Dispose();
            throw;
        }
    }

    public LabNetwork Network { get; }

    public IReadOnlyList<LabNode> Nodes => _nodes;

    /// <summary>Waits until every node sees every node Up and none unreachable.</summary>
    public Task AllUp(TimeSpan timeout) =>
        WaitUntil(() => _nodes.All(n => n.Latest?.SeesAllUp(_nodes.Count) == true), timeout, $"all {_nodes.Count} nodes to see each other Up and reachable");

    /// <summary>Polls <paramref name="condition"/> every 200 ms; fails naming what was awaited, with every node's state.</summary>
    public async Task WaitUntil(Func<bool> condition, TimeSpan timeout, string what)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (!condition())
        {
            AssertAlive();
            if (DateTime.UtcNow > deadline)
            {
                Assert.Fail($"Waited {timeout.TotalSeconds:N0} s for {what}.{Environment.NewLine}{Describe()}");
            }

            await Task.Delay(200);
        }
    }

    /// <summary>Lets the traffic run for <paramref name="duration"/>, failing at once if a node dies.</summary>
    public async Task Run(TimeSpan duration)
    {
        var end = DateTime.UtcNow + duration;
        while (DateTime.UtcNow < end)
        {
            AssertAlive();
            await Task.Delay(500);
        }
    }

    /// <summary>Every node process still runs, but those the lab crashed on purpose.</summary>
    public void AssertAlive()
    {
        foreach (var node in _nodes.Where(n => !n.Crashed && n.HasExited))
        {
            Assert.Fail($"{node.Name} ({node.Transport}) exited with {node.ExitCode}.{Environment.NewLine}{Describe()}");
        }
    }

    /// <summary>Messages <paramref name="to"/> has received from <paramref name="from"/>, by its latest report.</summary>
    public static long Received(LabNode from, LabNode to) => to.Latest?.Peer(from.Address).Received ?? 0;

    /// <summary>Nothing reordered or corrupted anywhere, ever; every gap on a pair with a disassociation counted.</summary>
    public void AssertOrderAndContent()
    {
        foreach (var to in _nodes)
        {
            foreach (var from in _nodes.Where(n => n != to))
            {
                var counters = to.Latest!.Peer(from.Address);
                Assert.True(counters.Reordered == 0, $"{to.Name} got {counters.Reordered} messages from {from.Name} out of order.{Environment.NewLine}{Describe()}");
                Assert.True(counters.Corrupt == 0, $"{to.Name} got {counters.Corrupt} corrupt messages from {from.Name}.{Environment.NewLine}{Describe()}");
                var disassociations = counters.Disassociations + from.Latest!.Peer(to.Address).Disassociations;
                Assert.True(
                    counters.Gaps == 0 || disassociations > 0,
                    $"{to.Name} lost {counters.Missing} messages from {from.Name} in {counters.Gaps} gaps with no disassociation between them.{Environment.NewLine}{Describe()}");
            }
        }
    }

    /// <summary>Every ordered pair has received more than at <paramref name="before"/>: traffic flows everywhere.</summary>
    public async Task AssertTrafficFlows(Dictionary<(string From, string To), long> before, TimeSpan within)
    {
        await WaitUntil(
            () => Pairs().All(p => Received(p.From, p.To) > before.GetValueOrDefault((p.From.Name, p.To.Name))),
            within,
            "traffic to flow again between every pair");
    }

    /// <summary>What every receiver has counted from every sender, now.</summary>
    public Dictionary<(string From, string To), long> ReceivedNow() =>
        Pairs().ToDictionary(p => (p.From.Name, p.To.Name), p => Received(p.From, p.To));

    public IEnumerable<(LabNode From, LabNode To)> Pairs() =>
        from a in _nodes from b in _nodes where a != b select (a, b);

    /// <summary>Every node's latest state and its last warnings, for a failure message.</summary>
    public string Describe()
    {
        var text = new StringBuilder();
        foreach (var node in _nodes)
        {
            var report = node.Latest;
            text.AppendLine($"{node.Name} ({node.Transport}, {node.Address}){(node.HasExited ? " EXITED" : "")}: " + (report is null
                ? "no report yet"
                : $"members {string.Join(", ", report.Members.Select(m => $"{m.Address.Split('@')[^1]} {m.Status}"))}; " +
                  $"unreachable [{string.Join(", ", report.Unreachable.Select(a => a.Split('@')[^1]))}]; ws {report.WorkingSetMb:N0} MB; " +
                  $"writes refused {report.WritesRefused}; " +
                  $"warnings {report.Warnings}, errors {report.Errors}; received " +
                  string.Join(", ", report.Peers.Select(p => $"{p.Key.Split('@')[^1]} {p.Value.Received} (gaps {p.Value.Gaps}, reordered {p.Value.Reordered}, dis {p.Value.Disassociations})"))));
        }

        foreach (var node in _nodes)
        {
            if (node.RecentErrors.Length > 0)
            {
                text.AppendLine(node.RecentErrors);
            }
        }

        return text.ToString();
    }

    public void Dispose()
    {
        foreach (var node in _nodes)
        {
            node.Dispose();
        }

        Network.Dispose();
    }
}
