using System.Runtime.InteropServices;

namespace RemotePingPong;

/// <summary>Everything a run measured, as written to the JSON file.</summary>
internal sealed class Report
{
    /// <summary>This machine's cores, OS and runtime, as every report names them.</summary>
    public static string ThisMachine =>
        $"{Environment.ProcessorCount} cores, {RuntimeInformation.OSDescription}, {RuntimeInformation.FrameworkDescription}";

    public string Machine { get; } = ThisMachine;

    /// <summary>Bytes per message, for throughput in bytes.</summary>
    public int Payload { get; init; }

    /// <summary>Messages each client kept in flight.</summary>
    public int InFlight { get; init; }

    public List<RowResult> Rows { get; } = [];

    public List<LatencyResult> Latency { get; } = [];

    public List<SweepResult> Sweep { get; } = [];

    public List<OpenLoop.OpenLoopResult> OpenLoop { get; } = [];

    public List<ManyPeers.ManyPeersResult> ManyPeers { get; } = [];
}
