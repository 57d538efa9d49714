using FlushBatching.Batching;
using FlushBatching.Tests.Support;

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

    [Fact]
    public void Each_limit_is_accepted_at_its_edge()
    {
        Assert.Equal(1, BatchingSettings.Default.WithMaxPendingWrites(1).MaxPendingWrites);
        Assert.Equal(1, BatchingSettings.Default.WithMaxPendingBytes(1).MaxPendingBytes);
        Assert.Equal(TimeSpan.FromTicks(1), BatchingSettings.Default.WithFlushInterval(TimeSpan.FromTicks(1)).FlushInterval);
        Assert.Equal(BatchingSettings.FlushIntervalLimit, BatchingSettings.Default.WithFlushInterval(BatchingSettings.FlushIntervalLimit).FlushInterval);
    }

    public static TheoryData<Func<BatchingSettings>, string, string> PastTheLimits => new()
    {
        { () => BatchingSettings.Default.WithMaxPendingWrites(BatchingSettings.MaxPendingWritesLimit + 1), "'65537' for 'max-pending-writes'", "a whole number from 1 to 65536" },
        { () => BatchingSettings.Default.WithMaxPendingBytes(BatchingSettings.MaxPendingBytesLimit + 1), "for 'max-pending-bytes'", "a size from 1b to 64m" },
        { () => BatchingSettings.Default.WithFlushInterval(BatchingSettings.FlushIntervalLimit + TimeSpan.FromTicks(1)), "for 'flush-interval'", "a duration above 0 and at most 1h" },
    };

    [Theory]
    [MemberData(nameof(PastTheLimits))]
    public void A_value_one_step_past_a_limit_is_refused_naming_the_key_the_value_and_what_is_allowed(Func<BatchingSettings> make, string named, string allowed) =>
        Refusal.Assert(make, named, allowed);

    [Fact]
    public void Settings_turned_off_say_so_in_their_log_line() =>
        Assert.StartsWith("enabled = off, ", BatchingSettings.Default.WithEnabled(false).ToString());
}
