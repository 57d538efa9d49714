namespace RemotePingPong.Soak;

/// <summary>One minute of a soak (or whatever <c>--sample-every</c> says): both processes as they stand, and the rates since the sample before.</summary>
/// <param name="Minute">Minutes since the load began.</param>
/// <param name="Cycle">How many times the client side had dropped its connections and made new ones.</param>
/// <param name="MsgsPerSec">Messages both ways per second since the sample before.</param>
/// <param name="CpuUsPerMessage">Both processes' CPU per message since the sample before.</param>
/// <param name="Gen2PerMinute">Both processes' gen2 collections per minute since the sample before.</param>
public sealed record SoakSample(
    double Minute,
    int Cycle,
    ProcessSample Client,
    ProcessSample Server,
    double MsgsPerSec,
    double CpuUsPerMessage,
    double Gen2PerMinute);
