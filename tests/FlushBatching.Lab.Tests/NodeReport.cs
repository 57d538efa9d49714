namespace FlushBatching.Lab.Tests;

/// <summary>One report line of a lab node (<c>LAB {json}</c>), as ClusterNode prints it once a second.</summary>
public sealed record NodeReport(
    string Node,
    string Address,
    long UptimeMs,
    List<NodeReport.MemberInfo> Members,
    List<string> Unreachable,
    Dictionary<string, NodeReport.PeerCounters> Peers,
    double WorkingSetMb,
    double GcHeapMb,
    int Threads,
    long WritesRefused,
    long Warnings,
    long Errors)
{
    /// <summary>Whether this node sees exactly <paramref name="count"/> members, all Up, and none unreachable.</summary>
    public bool SeesAllUp(int count) =>
        Members.Count == count && Members.All(m => m.Status == "Up") && Unreachable.Count == 0;

    public PeerCounters Peer(string address) => Peers.GetValueOrDefault(address) ?? new PeerCounters(0, 0, 0, 0, 0, 0, 0, 0, 0);

    public sealed record MemberInfo(string Address, string Status, long Uid);

    public sealed record PeerCounters(
        long Sent, long Acked, long Abandoned, long Received, long Gaps, long Missing, long Reordered, long Corrupt, long Disassociations);
}
