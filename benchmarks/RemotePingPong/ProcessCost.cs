using System.Diagnostics;

namespace RemotePingPong;

/// <summary>
/// What a process spent: CPU time (user and system, every thread), garbage collections by generation and bytes
/// allocated. A row's cost is the difference between two of these, summed over every process taking part.
/// </summary>
public sealed record ProcessCost(double CpuMs, int Gen0, int Gen1, int Gen2, long AllocatedBytes)
{
    /// <summary>This process, now.</summary>
    public static ProcessCost Now()
    {
        using var process = Process.GetCurrentProcess();
        return new ProcessCost(
            process.TotalProcessorTime.TotalMilliseconds,
            GC.CollectionCount(0),
            GC.CollectionCount(1),
            GC.CollectionCount(2),
            GC.GetTotalAllocatedBytes(precise: false));
    }

    /// <summary>What was spent between <paramref name="before"/> and this one.</summary>
    public ProcessCost Since(ProcessCost before) =>
        new(CpuMs - before.CpuMs, Gen0 - before.Gen0, Gen1 - before.Gen1, Gen2 - before.Gen2, AllocatedBytes - before.AllocatedBytes);

    /// <summary>The cost of two processes together.</summary>
    public ProcessCost Plus(ProcessCost other) =>
        new(CpuMs + other.CpuMs, Gen0 + other.Gen0, Gen1 + other.Gen1, Gen2 + other.Gen2, AllocatedBytes + other.AllocatedBytes);
}
