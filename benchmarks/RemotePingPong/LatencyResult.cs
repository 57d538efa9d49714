namespace RemotePingPong;

/// <summary>Round-trip times at one message in flight for one transport, in microseconds.</summary>
internal sealed record LatencyResult(string Transport, int RoundTrips, double P50Us, double P90Us, double P99Us, double MaxUs);
