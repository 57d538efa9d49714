using System.Runtime.InteropServices;

namespace RemotePingPong;

/// <summary>Everything a run measured, as written to the JSON file.</summary>
internal sealed class Report
{
    /// <summary>This machine's cores, OS and runtime, as every report names them.</summary>
    public static string ThisMachine =>
        $"{Environment.ProcessorCount} cores, {RuntimeInformation.OSDescription}, {RuntimeInformation.FrameworkDescription}";

    public string Machine { get; } = ThisMachine;

    public List<RowResult> Rows { get; } = [];

    public List<LatencyResult> Latency { get; } = [];

    public List<SweepResult> Sweep { get; } = [];

    public List<OpenLoop.OpenLoopResult> OpenLoop { get; } = [];
}
