using System.Globalization;
using System.Runtime.InteropServices;

namespace FlushBatching.Tcp.Admission;

/// <summary>
/// How many inbound connections a process may hold so that it keeps descriptors for itself: the soft
/// <c>RLIMIT_NOFILE</c> (Linux and macOS), less the descriptors open when the first listener starts, less a reserve of
/// 10% of the limit or 64, whichever is more; and no more than half its memory holds.
/// </summary>
/// <remarks>
/// Why: out of descriptors, a .NET process can die in the runtime itself. Under <c>ulimit -n 256</c> and a flood of 400
/// connections, nodes died with the runtime's own "Out of memory." when the thread pool started a thread while no
/// descriptor was free; stock Akka.Remote's nodes died too. The reserve is for what the process opens after the
/// listener starts: threads, outbound connections, log files, the connections of peers already associated. Windows has
/// no such limit (its sockets are bounded by memory): there, and wherever the limit cannot be read, no bound is derived.
/// </remarks>
internal static class DescriptorBudget
{
    /// <summary>The least reserve: 64 descriptors.</summary>
    public const int LeastReserve = 64;

    /// <summary>The reserve for a process limit of <paramref name="limit"/> descriptors: 10% of it, at least <see cref="LeastReserve"/>.</summary>
    public static int Reserve(int limit) => Math.Max(LeastReserve, limit / 10);

    /// <summary>The process's soft descriptor limit, or <c>null</c> where it has none or it cannot be read.</summary>
    public static int? ProcessLimit()
    {
        if (!OperatingSystem.IsLinux() && !OperatingSystem.IsMacOS())
        {
            return null;
        }

        try
        {
            var resource = OperatingSystem.IsLinux() ? LinuxRlimitNofile : MacRlimitNofile;
            return GetRLimit(resource, out var limit) == 0 ? (int)Math.Min(limit.Current, int.MaxValue) : null;
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            return null;
        }
    }

    /// <summary>The descriptors this process has open now, or <c>null</c> where they cannot be counted.</summary>
    public static int? OpenNow()
    {
        var folder = OperatingSystem.IsLinux() ? "/proc/self/fd" : OperatingSystem.IsMacOS() ? "/dev/fd" : null;
        try
        {
            // The enumeration's own descriptor is among those counted: one more than the process holds, which errs safe.
            return folder is null ? null : Directory.EnumerateFileSystemEntries(folder).Count();
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }

    /// <summary>
    /// What one inbound connection is taken to cost in memory when the bound is capped by it: 64 KiB, twice the most
    /// measured (a held connection grew a node's resident memory by 15 to 33 KiB, by stack and by whether it had spoken;
    /// benchmarks/results/flood/inbound-cost.txt), for what the kernel holds for it beside.
    /// </summary>
    public const int BytesPerConnection = 64 * 1024;

    /// <summary>
    /// The bound on inbound connections derived from this process's descriptors now, with a sentence saying how, or
    /// <c>null</c> where the limit cannot be read. At least 1: a listener that takes nothing serves nobody. Capped so
    /// that the connections take at most half the memory the process may use, at <see cref="BytesPerConnection"/> each:
    /// under a container's usual limit of 1,048,576 descriptors, memory would run out long before descriptors.
    /// </summary>
    public static (int Bound, string How)? Derive() => ProcessLimit() is { } limit && OpenNow() is { } open
        ? Derive(limit, open, GC.GetGCMemoryInfo().TotalAvailableMemoryBytes)
        : null;

    /// <summary><see cref="Derive()"/> for a descriptor limit, the descriptors open and the memory the process may use, as given.</summary>
    internal static (int Bound, string How) Derive(int limit, int open, long availableMemory)
    {
        var reserve = Reserve(limit);
        var byDescriptors = Math.Max(1, limit - open - reserve);
        var byMemory = (int)Math.Clamp(availableMemory / 2 / BytesPerConnection, 1, int.MaxValue);
        var descriptors = string.Create(CultureInfo.InvariantCulture,
            $"derived from this process's descriptor limit of {limit}, less the {open} open at start and a reserve of {reserve}");
        return byDescriptors <= byMemory
            ? (byDescriptors, descriptors)
            : (byMemory, string.Create(CultureInfo.InvariantCulture,
                $"{descriptors}, which allows {byDescriptors}, capped at half of the {availableMemory / (1024 * 1024)} MiB this process may use, at {BytesPerConnection / 1024} KiB a connection"));
    }

    // RLIMIT_NOFILE: 7 on Linux, 8 on macOS; rlim_t is 64 bits on both 64-bit systems.
    private const int LinuxRlimitNofile = 7;
    private const int MacRlimitNofile = 8;

    [StructLayout(LayoutKind.Sequential)]
    private struct RLimit
    {
        public ulong Current;
        public ulong Maximum;
    }

    [DllImport("libc", EntryPoint = "getrlimit", SetLastError = true)]
    private static extern int GetRLimit(int resource, out RLimit limit);
}
