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
