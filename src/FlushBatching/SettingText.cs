using System.Globalization;

namespace FlushBatching;

/// <summary>
/// Parses and formats setting values in HOCON's notation: booleans (<c>on</c>, <c>off</c>, <c>true</c>, ...),
/// sizes (<c>16k</c>, <c>128000b</c>, <c>1MiB</c>, <c>2MB</c>) and durations (<c>40ms</c>, <c>1s</c>, <c>500us</c>).
/// </summary>
/// <remarks>
/// Size units follow the HOCON specification: <c>k</c>, <c>K</c>, <c>Ki</c> and <c>KiB</c> are powers of 1024,
/// <c>kB</c> is 1000; a bare number is bytes. Duration units are ns, us, ms, s, m, h and d (and their long
/// names); a bare number is milliseconds. Every parse failure is an <see cref="InvalidSettingException"/>
/// naming the key.
/// </remarks>
public static class SettingText
{
    private static readonly (string[] Names, long Factor)[] SizeUnits =
    [
        (["", "b", "B", "byte", "bytes"], 1),
        (["kB", "kilobyte", "kilobytes"], 1000),
        (["K", "k", "Ki", "KiB", "kibibyte", "kibibytes"], 1L << 10),
        (["MB", "megabyte", "megabytes"], 1000 * 1000),
        (["M", "m", "Mi", "MiB", "mebibyte", "mebibytes"], 1L << 20),
        (["GB", "gigabyte", "gigabytes"], 1000 * 1000 * 1000),
        (["G", "g", "Gi", "GiB", "gibibyte", "gibibytes"], 1L << 30),
    ];

    private static readonly (string[] Names, double TicksPerUnit)[] DurationUnits =
    [
        (["ns", "nano", "nanos", "nanosecond", "nanoseconds"], TimeSpan.TicksPerMillisecond / 1_000_000.0),
        (["us", "micro", "micros", "microsecond", "microseconds"], TimeSpan.TicksPerMillisecond / 1_000.0),
        (["", "ms", "milli", "millis", "millisecond", "milliseconds"], TimeSpan.TicksPerMillisecond),
        (["s", "second", "seconds"], TimeSpan.TicksPerSecond),
        (["m", "minute", "minutes"], TimeSpan.TicksPerMinute),
        (["h", "hour", "hours"], TimeSpan.TicksPerHour),
        (["d", "day", "days"], TimeSpan.TicksPerDay),
    ];

    /// <summary>Parses <c>on</c>/<c>off</c>, <c>true</c>/<c>false</c> or <c>yes</c>/<c>no</c>.</summary>
    public static bool ParseBoolean(string key, string value)
    {
        switch (value.Trim().ToLowerInvariant())
        {
            case "on" or "true" or "yes":
                return true;
            case "off" or "false" or "no":
                return false;
            default:
                throw new InvalidSettingException(key, value, "on, off, true, false, yes or no");
        }
    }

    /// <summary>Parses a whole number such as <c>30</c>.</summary>
    public static long ParseInteger(string key, string value)
    {
        if (long.TryParse(value.Trim(), NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var result))
        {
            return result;
        }

        throw new InvalidSettingException(key, value, "a whole number");
    }

    /// <summary>Parses a whole number that fits in 32 bits; <paramref name="allowed"/> says what the key allows.</summary>
    internal static int ParseInt32(string key, string value, string allowed)
    {
        var number = ParseInteger(key, value);
        return number is >= int.MinValue and <= int.MaxValue ? (int)number : throw new InvalidSettingException(key, value, allowed);
    }

    /// <summary>Parses a size in bytes such as <c>16k</c>, <c>128000b</c> or <c>1MiB</c>.</summary>
    public static long ParseSize(string key, string value)
    {
        var (number, unit) = Split(value);
        foreach (var (names, factor) in SizeUnits)
        {
            if (Array.IndexOf(names, unit) < 0)
            {
                continue;
            }

            if (long.TryParse(number, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var count))
            {
                try
                {
                    return checked(count * factor);
                }
                catch (OverflowException e)
                {
                    throw new InvalidSettingException(key, value, "a size that fits in 64 bits", e);
                }
            }

            break;
        }

        throw new InvalidSettingException(key, value, "a size such as 128000b, 16k, 16KiB, 16kB or 1MiB");
    }

    /// <summary>Parses a duration such as <c>40ms</c>, <c>1s</c> or <c>0.5s</c>; a bare number is milliseconds.</summary>
    public static TimeSpan ParseDuration(string key, string value)
    {
        var (number, unit) = Split(value);
        foreach (var (names, ticksPerUnit) in DurationUnits)
        {
            if (Array.IndexOf(names, unit) < 0)
            {
                continue;
            }

            if (double.TryParse(number, NumberStyles.AllowLeadingSign | NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out var count)
                && Math.Abs(count * ticksPerUnit) < TimeSpan.MaxValue.Ticks)
            {
                return TimeSpan.FromTicks((long)Math.Round(count * ticksPerUnit));
            }

            break;
        }

        throw new InvalidSettingException(key, value, "a duration such as 40ms, 1s, 500us or 2m");
    }

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
        var t when t % 10 == 0 => $"{t / 10}us",
        var t => $"{t * 100}ns",
    };

    /// <summary>
    /// Runs <paramref name="apply"/>, and when it rejects <paramref name="key"/>'s value in our normalised
    /// form, reports it with the text the user wrote instead.
    /// </summary>
    internal static T ReportingUserText<T>(string key, string value, Func<T> apply)
    {
        try
        {
            return apply();
        }
        catch (InvalidSettingException e) when (e.Key == key && e.Value != value)
        {
            throw new InvalidSettingException(key, value, e.Allowed, e);
        }
    }

    private static (string Number, string Unit) Split(string value)
    {
        var text = value.Trim();
        var end = 0;
        while (end < text.Length && (char.IsAsciiDigit(text[end]) || text[end] is '-' or '+' or '.'))
        {
            end++;
        }

        return (text[..end], text[end..].Trim());
    }
}
