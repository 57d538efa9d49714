using System.Runtime.InteropServices;

namespace RemotePingPong;

/// <summary>Everything a run measured, as written to the JSON file.</summary>
internal sealed class Report
{
    public string Machine { get; } =
        $"{Environment.ProcessorCount} cores, {RuntimeInformation.OSDescription}, {RuntimeInformation.FrameworkDescription}";

    public List<RowResult> Rows { get; } = [];

    public List<LatencyResult> Latency { get; } = [];

    public List<SweepResult> Sweep { get; } = [];
}
