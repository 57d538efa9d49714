namespace RemotePingPong;

/// <summary>One measured row: one transport at one client count. Serialized as-is into the JSON file.</summary>
internal sealed record RowResult(
    string Transport,
    int Clients,
    long Messages,
    double MsgsPerSec,
    double ElapsedMs,
    long? Frames,
    long? Sends,
    double? FramesPerSend,
    Dictionary<string, long>? FlushesByReason,
    string? Settings);
