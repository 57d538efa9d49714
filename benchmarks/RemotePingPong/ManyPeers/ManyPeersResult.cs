namespace RemotePingPong.ManyPeers;

/// <summary>
/// One transport with this many peers associated with the hub: what the hub process holds before the peers come
/// (Baseline*) and with every association up, both after a full collection, what it spends while the peers carry
/// their light traffic, and the round trips of that traffic. Serialized as-is into the JSON file.
/// </summary>
/// <param name="CpuPercentOfCore">The hub process's CPU time over the window, as a share of one core.</param>
/// <param name="RoundTrips">Round trips in the window: one ping a second from the hub to each peer's echo actor.</param>
internal sealed record ManyPeersResult(
    string Transport,
    int Run,
    int Peers,
    double BaselineWorkingSetMb,
    double WorkingSetMb,
    double BaselineLiveHeapMb,
    double LiveHeapMb,
    int BaselineThreads,
    int Threads,
    int BaselineOpenFiles,
    int OpenFiles,
    double CpuPercentOfCore,
    long RoundTrips,
    double RttP50Us,
    double RttP99Us,
    double RttMaxUs);
