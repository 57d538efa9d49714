using Akka.Actor;
using Akka.Cluster;
using FlushBatching.Akka.Tests.Support;
using FlushBatching.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// docs/operations.md's roll-out and roll-back, tried: a cluster on stock moves to the transport under test one node at
/// a time and back, under steady traffic between every pair of nodes.
/// </summary>
public abstract partial class TransportSuite
{
    private const string RollingSystem = "rolling";

    // Gossip and leader actions faster than Akka's defaults, so that a leave is seen and a join is Up in a second or two.
    private const string RollingCluster = """
        akka.actor.provider = cluster
        akka.cluster {
          gossip-interval = 200ms
          leader-actions-interval = 200ms
          periodic-tasks-initial-delay = 200ms
          seed-node-timeout = 2s
          retry-unsuccessful-join-after = 1s
        }
        """;

    [Fact]
    public async Task A_stock_cluster_moves_to_this_transport_one_node_at_a_time_and_back_under_traffic_losing_nothing()
    {
        var ports = Enumerable.Range(0, 3).Select(_ => RawPeer.ClosedEndPoint().Port).ToArray();
        var traffic = new PairTraffic();
        var incarnations = new int[3];
        var nodes = new Node?[3];
        try
        {
            for (var i = 0; i < 3; i++)
            {
                nodes[i] = StartRollingNode(i, Node.Stock, ports, traffic, ++incarnations[i]);
            }

            await AllUp(nodes, "the stock cluster");

            // Each step: the node leaves, stops, and comes back on the same address with the other transport; the two
            // others keep talking throughout, and every pair talks again once the node is Up.
            foreach (var (index, transportClass) in new[] { 0, 1, 2 }.Select(i => (i, TransportClass)).Concat(new[] { 2, 1, 0 }.Select(i => (i, Node.Stock))))
            {
                var what = $"node {index} switched to {transportClass.Split(',')[0]}";
                await Poll.Within(Cluster.Get(nodes[index]!.System).LeaveAsync());
                await nodes[index]!.DisposeAsync();
                nodes[index] = StartRollingNode(index, transportClass, ports, traffic, ++incarnations[index]);
                await AllUp(nodes, what);

                // Every pair, the new incarnation included, carries traffic again.
                var names = Enumerable.Range(0, 3).Select(i => Incarnation(i, incarnations[i])).ToArray();
                var before = PairCounts(traffic, names);
                await Poll.Until(() => PairCounts(traffic, names).Zip(before).All(p => p.First >= p.Second + 20), $"every pair to carry 20 more messages after {what}", seconds: 30);
                Assert.True(traffic.Faults.Count == 0, $"after {what}, messages lost or reordered: {string.Join("; ", traffic.Faults.Take(10))}");
            }
        }
        finally
        {
            foreach (var node in nodes)
            {
                if (node is not null)
                {
                    await node.DisposeAsync();
                }
            }
        }
    }

    private static string Incarnation(int index, int incarnation) => $"node{index}#{incarnation}";

    private static long[] PairCounts(PairTraffic traffic, string[] names) =>
        [.. from f in names from t in names where f != t select traffic.Received(f, t)];

    private Node StartRollingNode(int index, string transportClass, int[] ports, PairTraffic traffic, int incarnation)
    {
        var seeds = string.Join(", ", ports.Select(p => $"\"akka.tcp://{RollingSystem}@127.0.0.1:{p}\""));
        var node = Nodes.Start(RollingSystem, transportClass, $"port = {ports[index]}", $"{RollingCluster}\nakka.cluster.seed-nodes = [{seeds}]");
        var self = Incarnation(index, incarnation);
        node.System.ActorOf(Props.Create(() => new PairTraffic.Sink(traffic, self)), "sink");
        var targets = ports.Where((_, i) => i != index).Select(p => $"akka.tcp://{RollingSystem}@127.0.0.1:{p}/user/sink").ToList();
        node.System.ActorOf(Props.Create(() => new PairTraffic.Source(self, targets, TimeSpan.FromMilliseconds(10))), "source");
        return node;
    }

    private static Task AllUp(Node?[] nodes, string what) => Poll.Until(
        () => nodes.All(n => Cluster.Get(n!.System).State.Members.Count(m => m.Status == MemberStatus.Up) == 3),
        $"all three nodes to see three members Up after {what}", seconds: 60);
}
