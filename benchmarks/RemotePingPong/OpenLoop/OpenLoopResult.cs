namespace RemotePingPong.OpenLoop;

/// <summary>
/// One transport at one offered rate: round trips offered per second, how many came back per second, and their
/// latencies in microseconds, each counted from the time the message was due to be sent (not from when it was sent), so
/// a sender held up by a saturated machine or transport shows as latency instead of as a lower offered rate.
/// </summary>
/// <param name="Sustained">Whether every message came back within the run's grace period after the last was due.</param>
/// <param name="QueueDelayP50Us">This project's transports: the median of <c>flushbatching.queue_delay</c> over the clients' sends [us].</param>
/// <param name="QueueDelayP99Us">The same, its 99th percentile [us].</param>
internal sealed record OpenLoopResult(
    string Transport,
    int Run,
    int OfferedPerSec,
    double AchievedPerSec,
    long RoundTrips,
    double P50Us,
    double P99Us,
    double P999Us,
    double MaxUs,
    bool Sustained,
    double? QueueDelayP50Us = null,
    double? QueueDelayP99Us = null);
