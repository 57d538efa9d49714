namespace RemotePingPong;

/// <summary>
/// Round-trip times at one message in flight for one transport in one run (counted from 1), in microseconds, and the
/// CPU time every process taking part spent per round trip (the untimed ones included): at one message in flight a
/// wait shows as time but not as CPU, so the two tell a slower path from a later wake-up.
/// </summary>
internal sealed record LatencyResult(string Transport, int Run, int RoundTrips, double P50Us, double P90Us, double P99Us, double MaxUs, double CpuUsPerRoundTrip);
