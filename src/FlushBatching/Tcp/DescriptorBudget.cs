using System.Globalization;
using System.Runtime.InteropServices;

namespace FlushBatching.Tcp;

/// <summary>
/// How many inbound connections a listener may hold so that the process keeps descriptors for itself: the soft
/// <c>RLIMIT_NOFILE</c> (Linux and macOS), less the descriptors open when the listener starts, less a reserve of 10% of
/// the limit or 64, whichever is more.
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
    /// The bound on inbound connections derived from this process's descriptors now, with a sentence saying how, or
    /// <c>null</c> where the limit cannot be read. At least 1: a listener that takes nothing serves nobody.
    /// </summary>
    public static (int Bound, string How)? Derive()
    {
        if (ProcessLimit() is not { } limit || OpenNow() is not { } open)
        {
            return null;
        }

        var reserve = Reserve(limit);
        var bound = Math.Max(1, limit - open - reserve);
        return (bound, string.Create(CultureInfo.InvariantCulture,
            $"derived from this process's descriptor limit of {limit}, less the {open} open at start and a reserve of {reserve}"));
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
