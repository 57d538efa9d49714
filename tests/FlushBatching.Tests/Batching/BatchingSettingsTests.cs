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
