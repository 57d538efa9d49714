namespace FlushBatching.Tests;

public class SettingTextTests
{
    [Theory]
    [InlineData("16k", 16 * 1024)]
    [InlineData("16K", 16 * 1024)]
    [InlineData("16KiB", 16 * 1024)]
    [InlineData("16kB", 16000)]
    [InlineData("128000b", 128000)]
    [InlineData("128000", 128000)]
    [InlineData("1MiB", 1024 * 1024)]
    [InlineData("1m", 1024 * 1024)]
    [InlineData("2MB", 2_000_000)]
    [InlineData("1g", 1L << 30)]
    [InlineData(" 64 k ", 64 * 1024)]
    public void Sizes_read_hocon_units(string text, long bytes) => Assert.Equal(bytes, SettingText.ParseSize("key", text));

    [Theory]
    [InlineData("40ms", 40 * TimeSpan.TicksPerMillisecond)]
    [InlineData("40", 40 * TimeSpan.TicksPerMillisecond)]
    [InlineData("1s", TimeSpan.TicksPerSecond)]
    [InlineData("0.5s", TimeSpan.TicksPerSecond / 2)]
    [InlineData("500us", 500 * 10)]
    [InlineData("2 minutes", 2 * TimeSpan.TicksPerMinute)]
    [InlineData("1h", TimeSpan.TicksPerHour)]
    public void Durations_read_hocon_units(string text, long ticks) => Assert.Equal(TimeSpan.FromTicks(ticks), SettingText.ParseDuration("key", text));

    [Theory]
    [InlineData("on", true)]
    [InlineData("TRUE", true)]
    [InlineData("yes", true)]
    [InlineData("off", false)]
    [InlineData("false", false)]
    [InlineData("no", false)]
    public void Booleans_read_hocon_words(string text, bool value) => Assert.Equal(value, SettingText.ParseBoolean("key", text));

    [Theory]
    [InlineData("")]
    [InlineData("k")]
    [InlineData("1.5k")]
    [InlineData("16 furlongs")]
    [InlineData("99999999999999g")]
    public void Bad_sizes_are_refused(string text) => Assert.Throws<InvalidSettingException>(() => SettingText.ParseSize("key", text));

    [Theory]
    [InlineData("")]
    [InlineData("ms")]
    [InlineData("3 fortnights")]
    [InlineData("1e400s")]
    public void Bad_durations_are_refused(string text) => Assert.Throws<InvalidSettingException>(() => SettingText.ParseDuration("key", text));

    [Theory]
    [InlineData(16 * 1024, "16k")]
    [InlineData(128000, "125k")]
    [InlineData(128001, "128001b")]
    [InlineData(1024 * 1024, "1m")]
    public void Sizes_format_back_to_what_parses(long bytes, string text)
    {
        Assert.Equal(text, SettingText.FormatSize(bytes));
        Assert.Equal(bytes, SettingText.ParseSize("key", text));
    }

    [Theory]
    [InlineData(40 * TimeSpan.TicksPerMillisecond, "40ms")]
    [InlineData(TimeSpan.TicksPerHour, "1h")]
    [InlineData(90 * TimeSpan.TicksPerSecond, "90s")]
    [InlineData(2 * TimeSpan.TicksPerMinute, "2m")]
    [InlineData(5000, "500us")]
    public void Durations_format_back_to_what_parses(long ticks, string text)
    {
        Assert.Equal(text, SettingText.FormatDuration(TimeSpan.FromTicks(ticks)));
        Assert.Equal(TimeSpan.FromTicks(ticks), SettingText.ParseDuration("key", text));
    }
}
