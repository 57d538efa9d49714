using System.Diagnostics;
using System.Runtime.InteropServices;

namespace RemotePingPong.OpenLoop;

/// <summary>
/// Sleeps until a <see cref="Stopwatch"/> timestamp to within tens of microseconds, where <see cref="Thread.Sleep(int)"/>
/// rounds up to whole milliseconds. On Linux (where Stopwatch reads CLOCK_MONOTONIC in nanoseconds) it sleeps to the
/// absolute time with clock_nanosleep, so wake-ups do not drift; elsewhere it falls back to whole milliseconds.
/// </summary>
internal static partial class PreciseSleep
{
    private const int ClockMonotonic = 1;
    private const int TimerAbstime = 1;
    private const int Eintr = 4;

    private static readonly bool Precise = OperatingSystem.IsLinux() && Stopwatch.Frequency == 1_000_000_000;

    /// <summary>Whether sleeps are precise here; the report says so.</summary>
    public static bool IsPrecise => Precise;

    public static void Until(long timestamp)
    {
        if (Precise)
        {
            var request = new Timespec { Seconds = timestamp / 1_000_000_000, Nanoseconds = timestamp % 1_000_000_000 };
            while (ClockNanosleep(ClockMonotonic, TimerAbstime, ref request, IntPtr.Zero) == Eintr)
            {
            }

            return;
        }

        var milliseconds = (timestamp - Stopwatch.GetTimestamp()) * 1000 / Stopwatch.Frequency;
        if (milliseconds > 0)
        {
            Thread.Sleep((int)milliseconds);
        }
    }

    [LibraryImport("libc", EntryPoint = "clock_nanosleep")]
    private static partial int ClockNanosleep(int clock, int flags, ref Timespec request, IntPtr remain);

    [StructLayout(LayoutKind.Sequential)]
    private struct Timespec
    {
        public long Seconds;
        public long Nanoseconds;
    }
}
