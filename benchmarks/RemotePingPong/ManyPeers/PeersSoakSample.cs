using RemotePingPong.Soak;

namespace RemotePingPong.ManyPeers;

/// <summary>One sample of the hub in a peers soak: what its process holds, DotNetty's pooled allocator, and the round trips since the sample before.</summary>
/// <param name="Minute">Minutes since every peer was up.</param>
/// <param name="ThreadCaches">DotNetty's thread-local allocator caches (<c>NumThreadLocalCaches</c>): one per thread that has allocated from the pool and not yet died.</param>
/// <param name="DotNettyWarnings">Warnings DotNetty's EventSource reported so far.</param>
/// <param name="DotNettyErrors">Errors DotNetty's EventSource reported so far.</param>
/// <param name="RoundTripsPerSec">Round trips to the peers per second since the sample before.</param>
/// <param name="RttP99Us">Their p99, in microseconds.</param>
/// <param name="CpuUsPerRoundTrip">The hub's CPU per round trip since the sample before.</param>
public sealed record PeersSoakSample(
    double Minute,
    ProcessSample Hub,
    int ThreadCaches,
    long DotNettyWarnings,
    long DotNettyErrors,
    double RoundTripsPerSec,
    long RttP99Us,
    double CpuUsPerRoundTrip);
