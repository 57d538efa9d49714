using Akka.Configuration;

namespace FlushBatching.Akka;

/// <summary>
/// Reads a transport section's values with Akka's own HOCON parsing, the parsing stock Akka.Remote reads the same
/// keys with, so that a value means here what it means to a stock node and to the rest of the user's configuration.
/// A value that does not parse, or that the core's settings refuse, throws <see cref="InvalidSettingException"/>
/// naming the key and the text the user wrote.
/// </summary>
internal sealed class SectionReader(Config config)
{
    public Config Config => config;

    public string Text(string key) => config.GetString(key) ?? throw new InvalidSettingException(key, "(missing)", "a value");

    public bool Boolean(string key) => Parse(key, "on, off, true or false", () => config.GetBoolean(key));

    public long Whole(string key) => Parse(key, "a whole number", () => config.GetLong(key));

    /// <summary>
    /// A whole number for a core setting that takes an <see cref="int"/>: one beyond its range becomes the nearest
    /// end of it, which every such setting refuses, so the refusal states the setting's own range.
    /// </summary>
    public int Int32(string key) => (int)Math.Clamp(Whole(key), int.MinValue, int.MaxValue);

    public long Size(string key) =>
        Parse(key, "a size such as 128000b, 16k, 16KiB, 16kB or 1MiB", () => config.GetByteSize(key) ?? throw new FormatException());

    public TimeSpan Duration(string key) => Parse(key, "a duration such as 40ms, 1s, 500micros or 2m", () => config.GetTimeSpan(key));

    public double Number(string key) => Parse(key, "a number such as 1.0", () => config.GetDouble(key));

    /// <summary>
    /// Runs <paramref name="apply"/>; when the core refuses the value of one of <paramref name="keys"/> (which it
    /// names without the section's prefixes, and in its own notation), reports it under that key with the user's text.
    /// </summary>
    public T Apply<T>(Func<T> apply, params string[] keys)
    {
        try
        {
            return apply();
        }
        catch (InvalidSettingException e) when (keys.FirstOrDefault(key => key == e.Key || key.EndsWith("." + e.Key, StringComparison.Ordinal)) is { } key)
        {
            throw new InvalidSettingException(key, Text(key), e.Allowed, e);
        }
    }

    private T Parse<T>(string key, string allowed, Func<T> parse)
    {
        try
        {
            return parse();
        }
        catch (Exception e) when (e is not InvalidSettingException)
        {
            // Whatever Akka's getter throws for the text: FormatException, OverflowException, NotSupportedException,
            // and ArgumentNullException for an empty value (found by fuzzing). The user's text is shown as written.
            throw new InvalidSettingException(key, Shown(key), allowed, e);
        }
    }

    // Akka's GetString gives "" for a list or an object, which would read as an empty value.
    private string Shown(string key)
    {
        try
        {
            return config.GetValue(key) is { } value && (value.IsArray() || value.IsObject()) ? "(not a single value)" : config.GetString(key) ?? "";
        }
        catch (Exception)
        {
            return "(not a single value)";
        }
    }
}
