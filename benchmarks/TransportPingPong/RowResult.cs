namespace TransportPingPong;

/// <summary>One measured row: one mode at one pair count. Serialized as-is into the JSON file.</summary>
internal sealed record RowResult(
    string Batching,
    int Pairs,
    int InFlight,
    long Messages,
    double MsgsPerSec,
    double ElapsedMs,
    double FramesPerSend,
    double BytesAllocatedPerMessage,
    double RoundTripP50Us,
    double RoundTripP90Us,
    double RoundTripP99Us,
    double RoundTripMaxUs);
