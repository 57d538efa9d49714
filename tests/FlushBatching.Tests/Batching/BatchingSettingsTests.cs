using FlushBatching.Batching;

namespace FlushBatching.Tests.Batching;

public class BatchingSettingsTests
{
    [Fact]
    public void Defaults_are_akka_remotes_documented_values()
    {
        var settings = BatchingSettings.Default;
        Assert.True(settings.Enabled);
        Assert.Equal(30, settings.MaxPendingWrites);
        Assert.Equal(16 * 1024, settings.MaxPendingBytes);
        Assert.Equal(TimeSpan.FromMilliseconds(40), settings.FlushInterval);
        Assert.Equal("enabled = on, max-pending-writes = 30, max-pending-bytes = 16k, flush-interval = 40ms", settings.ToString());
    }

    [Theory]
    [InlineData("enabled", "off")]
    [InlineData("enabled", "false")]
    [InlineData("max-pending-writes", "64")]
    [InlineData("max-pending-bytes", "128000b")]
    [InlineData("max-pending-bytes", "1MiB")]
    [InlineData("flush-interval", "1s")]
    public void Each_key_can_be_overridden_from_hocon_text(string key, string value)
    {
        var settings = BatchingSettings.Default.With(key, value);
        Assert.NotEqual(BatchingSettings.Default, settings);
        Assert.Equal(settings, BatchingSettings.FromKeyValues([new(key, value)]));
    }

    [Fact]
    public void Overrides_parse_to_the_values_written()
    {
        var settings = BatchingSettings.FromKeyValues(
        [
            new("enabled", "off"),
            new("max-pending-writes", "64"),
            new("max-pending-bytes", "1MiB"),
            new("flush-interval", "5ms"),
        ]);
        Assert.False(settings.Enabled);
        Assert.Equal(64, settings.MaxPendingWrites);
        Assert.Equal(1024 * 1024, settings.MaxPendingBytes);
        Assert.Equal(TimeSpan.FromMilliseconds(5), settings.FlushInterval);
    }

    [Theory]
    [InlineData("max-pending-writes", "0", "from 1 to 65536")]
    [InlineData("max-pending-writes", "-5", "from 1 to 65536")]
    [InlineData("max-pending-writes", "65537", "from 1 to 65536")]
    [InlineData("max-pending-writes", "thirty", "whole number")]
    [InlineData("max-pending-writes", "99999999999", "from 1 to 65536")]
    [InlineData("max-pending-bytes", "0", "from 1b to 64m")]
    [InlineData("max-pending-bytes", "-1k", "from 1b to 64m")]
    [InlineData("max-pending-bytes", "65MiB", "from 1b to 64m")]
    [InlineData("max-pending-bytes", "16 parsecs", "a size such as")]
    [InlineData("flush-interval", "0ms", "above 0")]
    [InlineData("flush-interval", "-40ms", "above 0")]
    [InlineData("flush-interval", "2h", "at most 1h")]
    [InlineData("flush-interval", "soon", "a duration such as")]
    [InlineData("enabled", "maybe", "on, off")]
    [InlineData("max-pending-messages", "30", "one of the keys")]
    public void A_bad_value_is_refused_naming_key_value_and_what_is_allowed(string key, string value, string allowed)
    {
        var e = Assert.Throws<InvalidSettingException>(() => BatchingSettings.Default.With(key, value));
        Assert.Equal(key, e.Key);
        Assert.Equal(value, e.Value);
        Assert.Contains(allowed, e.Allowed);
        Assert.Contains($"'{value}'", e.Message);
        Assert.Contains($"'{key}'", e.Message);
    }

    [Fact]
    public void Code_built_settings_are_validated_too()
    {
        Assert.Throws<InvalidSettingException>(() => BatchingSettings.Default.WithMaxPendingWrites(0));
        Assert.Throws<InvalidSettingException>(() => BatchingSettings.Default.WithMaxPendingBytes(0));
        Assert.Throws<InvalidSettingException>(() => BatchingSettings.Default.WithFlushInterval(TimeSpan.Zero));
        Assert.Equal(BatchingSettings.MaxPendingWritesLimit, BatchingSettings.Default.WithMaxPendingWrites(BatchingSettings.MaxPendingWritesLimit).MaxPendingWrites);
        Assert.Equal(BatchingSettings.MaxPendingBytesLimit, BatchingSettings.Default.WithMaxPendingBytes(BatchingSettings.MaxPendingBytesLimit).MaxPendingBytes);
    }
}
