namespace RemotePingPong;

/// <summary>One measured row: one transport at one client count. Serialized as-is into the JSON file.</summary>
/// <param name="CpuUsPerMessage">CPU time (user and system) of every process taking part, per message counted in <paramref name="MsgsPerSec"/>.</param>
/// <param name="AllocatedBytesPerMessage">Bytes allocated on the managed heap by every process taking part, per message.</param>
/// <param name="Processes">1 with the echo system in this process; 2 with a server process, whose cost is included.</param>
/// <param name="QueueDelayP50Us">This project's transports: the median of <c>flushbatching.queue_delay</c> over this process's sends [us].</param>
/// <param name="QueueDelayP99Us">The same, its 99th percentile [us].</param>
internal sealed record RowResult(
    string Transport,
    int Clients,
    long Messages,
    double MsgsPerSec,
    double ElapsedMs,
    double CpuUsPerMessage,
    double AllocatedBytesPerMessage,
    int Gen0Collections,
    int Gen1Collections,
    int Gen2Collections,
    int Processes,
    long? Frames,
    long? Sends,
    double? FramesPerSend,
    Dictionary<string, long>? FlushesByReason,
    string? Settings,
    double? QueueDelayP50Us = null,
    double? QueueDelayP99Us = null);
