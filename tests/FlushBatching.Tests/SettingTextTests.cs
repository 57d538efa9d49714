namespace FlushBatching.Tests;

public class SettingTextTests
{
    [Theory]
    [InlineData(0, "0b")]
    [InlineData(16 * 1024, "16k")]
    [InlineData(128000, "125k")]
    [InlineData(128001, "128001b")]
    [InlineData(1024 * 1024, "1m")]
    public void Sizes_are_written_in_the_largest_unit_that_keeps_them_whole(long bytes, string text) =>
        Assert.Equal(text, SettingText.FormatSize(bytes));

    [Theory]
    [InlineData(40 * TimeSpan.TicksPerMillisecond, "40ms")]
    [InlineData(TimeSpan.TicksPerHour, "1h")]
    [InlineData(90 * TimeSpan.TicksPerSecond, "90s")]
    [InlineData(2 * TimeSpan.TicksPerMinute, "2m")]
    [InlineData(5000, "500micros")]
    [InlineData(1, "100ns")]
    public void Durations_are_written_in_the_largest_unit_that_keeps_them_whole(long ticks, string text) =>
        Assert.Equal(text, SettingText.FormatDuration(TimeSpan.FromTicks(ticks)));

    [Theory]
    [InlineData(-(1L << 20), "-1m")]
    [InlineData(-(3L << 10), "-3k")]
    public void Negative_sizes_in_error_messages_keep_their_sign(long bytes, string text) =>
        Assert.Equal(text, SettingText.FormatSize(bytes));
}
