namespace FlushBatching;

/// <summary>
/// Writes setting values in HOCON's notation (<c>16k</c>, <c>128000b</c>, <c>40ms</c>, <c>1s</c>), so that an
/// error message or a log line shows a value the way a user would write it in their configuration.
/// </summary>
internal static class SettingText
{
    /// <summary>Formats a size the way HOCON writes it: <c>16k</c> when it is a whole number of KiB, else bytes.</summary>
    public static string FormatSize(long bytes) => bytes switch
    {
        0 => "0b",
        _ when bytes % (1L << 20) == 0 => $"{bytes >> 20}m",
        _ when bytes % (1L << 10) == 0 => $"{bytes >> 10}k",
        _ => $"{bytes}b",
    };

    /// <summary>Formats a duration the way HOCON writes it, in the largest unit that keeps it whole.</summary>
    public static string FormatDuration(TimeSpan duration) => duration.Ticks switch
    {
        var t when t % TimeSpan.TicksPerHour == 0 && t != 0 => $"{t / TimeSpan.TicksPerHour}h",
        var t when t % TimeSpan.TicksPerMinute == 0 && t != 0 => $"{t / TimeSpan.TicksPerMinute}m",
        var t when t % TimeSpan.TicksPerSecond == 0 && t != 0 => $"{t / TimeSpan.TicksPerSecond}s",
        var t when t % TimeSpan.TicksPerMillisecond == 0 => $"{t / TimeSpan.TicksPerMillisecond}ms",
        var t when t % 10 == 0 => $"{t / 10}micros",
        var t => $"{t * 100}ns",
    };
}
