using FlushBatching.Batching;
using FlushBatching.Tests.Support;
using Microsoft.Extensions.Time.Testing;

namespace FlushBatching.Tests.Batching;

public class FlushPolicyTests
{
    private readonly FakeTimeProvider _clock = new();

    [Fact]
    public void Count_trigger_fires_at_max_pending_writes()
    {
        var policy = new FlushPolicy(BatchingSettings.Default.WithMaxPendingWrites(3), _clock);
        Assert.Equal(FlushReason.None, policy.OnWrite(10));
        Assert.Equal(FlushReason.None, policy.OnWrite(10));
        Assert.Equal(FlushReason.Count, policy.OnWrite(10));
        Assert.Equal(3, policy.PendingWrites);
        policy.OnFlushed();
        Assert.False(policy.HasPending);
        Assert.Equal(FlushReason.None, policy.OnWrite(10));
    }

    [Fact]
    public void Bytes_trigger_fires_when_pending_bytes_reach_max_pending_bytes()
    {
        var policy = new FlushPolicy(BatchingSettings.Default.WithMaxPendingBytes(100), _clock);
        Assert.Equal(FlushReason.None, policy.OnWrite(60));
        Assert.Equal(FlushReason.Bytes, policy.OnWrite(40));
        Assert.Equal(100, policy.PendingBytes);
    }

    [Fact]
    public void Interval_trigger_fires_once_the_oldest_write_was_held_flush_interval()
    {
        var policy = new FlushPolicy(BatchingSettings.Default.WithFlushInterval(TimeSpan.FromMilliseconds(40)), _clock);
        Assert.Equal(FlushReason.None, policy.OnWrite(1));
        _clock.Advance(TimeSpan.FromMilliseconds(39));
        Assert.Equal(FlushReason.None, policy.OnTimer());
        Assert.Equal(FlushReason.None, policy.OnWrite(1));
        _clock.Advance(TimeSpan.FromMilliseconds(1));
        Assert.Equal(FlushReason.Interval, policy.OnTimer());
        Assert.Equal(FlushReason.Interval, policy.OnWrite(1));
    }

    [Fact]
    public void Time_until_due_counts_from_the_oldest_pending_write_and_is_null_when_nothing_is_pending()
    {
        var policy = new FlushPolicy(BatchingSettings.Default, _clock);
        Assert.Null(policy.TimeUntilDue);
        policy.OnWrite(1);
        _clock.Advance(TimeSpan.FromMilliseconds(15));
        policy.OnWrite(1);
        Assert.Equal(TimeSpan.FromMilliseconds(25), policy.TimeUntilDue);
        _clock.Advance(TimeSpan.FromMilliseconds(100));
        Assert.Equal(TimeSpan.Zero, policy.TimeUntilDue);
        policy.OnFlushed();
        Assert.Null(policy.TimeUntilDue);
    }

    [Fact]
    public void Burst_end_flushes_only_when_something_is_pending()
    {
        var policy = new FlushPolicy(BatchingSettings.Default, _clock);
        Assert.Equal(FlushReason.None, policy.OnBurstEnd());
        policy.OnWrite(1);
        Assert.Equal(FlushReason.BurstEnd, policy.OnBurstEnd());
    }

    [Fact]
    public void When_off_every_write_is_flushed_by_itself()
    {
        var policy = new FlushPolicy(BatchingSettings.Default.WithEnabled(false), _clock);
        Assert.Equal(FlushReason.Unbatched, policy.OnWrite(1));
        policy.OnFlushed();
        Assert.Equal(FlushReason.Unbatched, policy.OnWrite(1));
    }

    [Fact]
    public void Pending_since_is_the_first_pending_writes_time()
    {
        var policy = new FlushPolicy(BatchingSettings.Default, _clock);
        var first = _clock.GetTimestamp();
        policy.OnWrite(1);
        _clock.Advance(TimeSpan.FromMilliseconds(5));
        policy.OnWrite(1);

        Assert.Equal(first, policy.PendingSince);
        policy.OnFlushed();
        policy.OnWrite(1);
        Assert.Equal(first + TimeSpan.FromMilliseconds(5).Ticks, policy.PendingSince);
    }

    [Fact]
    public void When_off_a_write_reads_no_clock()
    {
        var clock = new FakeTimeProvider { AutoAdvanceAmount = TimeSpan.FromSeconds(1) };
        var policy = new FlushPolicy(BatchingSettings.Default.WithEnabled(false), clock);
        var before = clock.GetTimestamp();

        Assert.Equal(FlushReason.Unbatched, policy.OnWrite(1));

        Assert.Equal(before + TimeSpan.TicksPerSecond, clock.GetTimestamp());
    }

    [Fact]
    public void Nothing_pending_reads_no_clock()
    {
        var clock = new FakeTimeProvider { AutoAdvanceAmount = TimeSpan.FromSeconds(1) };
        var policy = new FlushPolicy(BatchingSettings.Default, clock);
        var before = clock.GetTimestamp();
        Assert.Equal(FlushReason.None, policy.OnTimer());
        Assert.Equal(FlushReason.None, policy.OnBurstEnd());
        Assert.Null(policy.TimeUntilDue);
        Assert.Equal(before + TimeSpan.TicksPerSecond, clock.GetTimestamp());
    }

    [Fact]
    public void A_policy_needs_settings_and_a_clock()
    {
        Assert.Throws<ArgumentNullException>("settings", () => new FlushPolicy(null!, _clock));
        Assert.Throws<ArgumentNullException>("timeProvider", () => new FlushPolicy(BatchingSettings.Default, null!));
    }
}
