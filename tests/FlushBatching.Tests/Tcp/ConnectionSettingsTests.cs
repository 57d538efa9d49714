using FlushBatching.Framing;
using FlushBatching.Tcp;
using FlushBatching.Tests.Support;

namespace FlushBatching.Tests.Tcp;

public class ConnectionSettingsTests
{
    [Fact]
    public void Defaults_match_akka_remotes_socket_options()
    {
        var settings = ConnectionSettings.Default;
        Assert.True(settings.NoDelay);
        Assert.True(settings.KeepAlive);
        Assert.Equal(256000, settings.SendBufferSize);
        Assert.Equal(256000, settings.ReceiveBufferSize);
        Assert.Equal(4096, settings.Backlog);
        Assert.Equal(TimeSpan.FromSeconds(15), settings.ConnectTimeout);
        Assert.Equal(1_024_000, settings.WriteBufferHighWaterMark);
        Assert.Equal(512_000, settings.WriteBufferLowWaterMark);
        Assert.Null(settings.Tls);
    }

    [Fact]
    public void Unset_water_marks_follow_the_maximum_frame_size_and_set_ones_stay_as_set()
    {
        var largeFrames = FramingSettings.Default.WithMaximumFrameSize(2_000_000);

        var following = ConnectionSettings.Default.WithFraming(largeFrames);
        var set = ConnectionSettings.Default.WithWriteBufferWaterMarks(high: 300_000, low: 100_000).WithFraming(largeFrames);

        Assert.Equal((16_000_000L, 8_000_000L), (following.WriteBufferHighWaterMark, following.WriteBufferLowWaterMark));
        Assert.Equal((300_000L, 100_000L), (set.WriteBufferHighWaterMark, set.WriteBufferLowWaterMark));
    }

    [Fact]
    public void A_mark_set_alone_leaves_the_other_to_its_rule_the_low_one_half_the_high_one()
    {
        var highOnly = ConnectionSettings.Default.WithWriteBufferWaterMarksOrDefaults(high: 300_000, low: null);
        var lowOnly = ConnectionSettings.Default.WithWriteBufferWaterMarksOrDefaults(high: null, low: 100_000);

        Assert.Equal((300_000L, 150_000L), (highOnly.WriteBufferHighWaterMark, highOnly.WriteBufferLowWaterMark));
        // The default high mark still follows the frame size: it was not frozen by setting the low one.
        var largeFrames = lowOnly.WithFraming(FramingSettings.Default.WithMaximumFrameSize(2_000_000));
        Assert.Equal((16_000_000L, 100_000L), (largeFrames.WriteBufferHighWaterMark, largeFrames.WriteBufferLowWaterMark));
        var refused = Assert.Throws<InvalidSettingException>(() => ConnectionSettings.Default.WithWriteBufferWaterMarksOrDefaults(high: null, low: 1_024_000));
        Assert.StartsWith("Invalid value '1000k' for 'write-buffer-low-water-mark'", refused.Message);
        Assert.Contains("below write-buffer-high-water-mark (1000k)", refused.Message);
        // A low mark set before still has to sit below a high mark given later.
        var lowered = Assert.Throws<InvalidSettingException>(() => lowOnly.WithWriteBufferWaterMarksOrDefaults(high: 50_000, low: null));
        Assert.StartsWith("Invalid value '100000b' for 'write-buffer-low-water-mark'", lowered.Message);
    }

    [Fact]
    public void A_mark_given_again_replaces_the_one_set_before_and_a_mark_not_given_keeps_it()
    {
        var set = ConnectionSettings.Default.WithWriteBufferWaterMarks(high: 200_000, low: 10_000);

        var lowAgain = set.WithWriteBufferWaterMarksOrDefaults(high: null, low: 20_000);
        var highAgain = set.WithWriteBufferWaterMarksOrDefaults(high: 300_000, low: null);

        Assert.Equal((200_000L, 20_000L), (lowAgain.WriteBufferHighWaterMark, lowAgain.WriteBufferLowWaterMark));
        Assert.Equal((300_000L, 10_000L), (highAgain.WriteBufferHighWaterMark, highAgain.WriteBufferLowWaterMark));
    }

    [Fact]
    public void The_default_high_water_mark_stops_at_what_every_stack_can_hold()
    {
        var settings = ConnectionSettings.Default.WithFraming(FramingSettings.Default.WithMaximumFrameSize(int.MaxValue));

        Assert.Equal(ConnectionSettings.MaxWriteBufferWaterMark, settings.WriteBufferHighWaterMark);
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(int.MaxValue + 1L)]
    public void A_buffer_size_outside_what_a_socket_takes_is_refused_naming_its_key(long bytes)
    {
        var e = Assert.Throws<InvalidSettingException>(() => ConnectionSettings.Default.WithReceiveBufferSize(bytes));
        Assert.Equal(SettingKeys.ReceiveBufferSize, e.Key);
        Assert.Equal(0, ConnectionSettings.Default.WithReceiveBufferSize(0).ReceiveBufferSize);
    }

    [Fact]
    public void The_low_water_mark_must_stay_below_the_high_one()
    {
        Assert.Throws<InvalidSettingException>(() => ConnectionSettings.Default.WithWriteBufferWaterMarks(100, 100));
        var settings = ConnectionSettings.Default.WithWriteBufferWaterMarks(100, 99);
        Assert.Equal(99, settings.WriteBufferLowWaterMark);
    }

    [Fact]
    public void Each_limit_is_accepted_at_its_edges()
    {
        var settings = ConnectionSettings.Default;
        Assert.Equal(0, settings.WithBacklog(0).Backlog);
        Assert.Equal(int.MaxValue, settings.WithBacklog(int.MaxValue).Backlog);
        Assert.Equal(TimeSpan.Zero, settings.WithCloseTimeout(TimeSpan.Zero).CloseTimeout);
        Assert.Equal(TimeSpan.FromHours(1), settings.WithCloseTimeout(TimeSpan.FromHours(1)).CloseTimeout);
        Assert.Equal(TimeSpan.FromTicks(1), settings.WithConnectTimeout(TimeSpan.FromTicks(1)).ConnectTimeout);
        Assert.Equal(TimeSpan.FromHours(1), settings.WithConnectTimeout(TimeSpan.FromHours(1)).ConnectTimeout);
        Assert.Equal(int.MaxValue, settings.WithSendBufferSize(int.MaxValue).SendBufferSize);
        Assert.Equal(0, settings.WithReceiveBufferSize(0).ReceiveBufferSize);
        var smallest = settings.WithWriteBufferWaterMarks(high: 1, low: 0);
        Assert.Equal((1L, 0L), (smallest.WriteBufferHighWaterMark, smallest.WriteBufferLowWaterMark));
        var largest = settings.WithWriteBufferWaterMarks(high: ConnectionSettings.MaxWriteBufferWaterMark, low: ConnectionSettings.MaxWriteBufferWaterMark - 1);
        Assert.Equal(ConnectionSettings.MaxWriteBufferWaterMark, largest.WriteBufferHighWaterMark);
    }

    public static TheoryData<Func<ConnectionSettings>, string, string> PastTheLimits => new()
    {
        { () => ConnectionSettings.Default.WithBacklog(-1), "'-1' for 'backlog'", "a whole number from 0 to 2147483647" },
        { () => ConnectionSettings.Default.WithCloseTimeout(TimeSpan.FromTicks(-1)), "for 'akka.remote.flush-wait-on-shutdown'", "a duration from 0 to 1h" },
        { () => ConnectionSettings.Default.WithCloseTimeout(TimeSpan.FromHours(1) + TimeSpan.FromTicks(1)), "for 'akka.remote.flush-wait-on-shutdown'", "a duration from 0 to 1h" },
        { () => ConnectionSettings.Default.WithConnectTimeout(TimeSpan.Zero), "for 'connection-timeout'", "a duration above 0 and at most 1h" },
        { () => ConnectionSettings.Default.WithConnectTimeout(TimeSpan.FromHours(1) + TimeSpan.FromTicks(1)), "for 'connection-timeout'", "a duration above 0 and at most 1h" },
        { () => ConnectionSettings.Default.WithSendBufferSize(-1), "'-1b' for 'send-buffer-size'", "a size from 0b (the operating system's default) to 2147483647b" },
        { () => ConnectionSettings.Default.WithWriteBufferWaterMarks(high: 0, low: 0), "'0b' for 'write-buffer-high-water-mark'", "a size from 1b to" },
        { () => ConnectionSettings.Default.WithWriteBufferWaterMarks(high: ConnectionSettings.MaxWriteBufferWaterMark + 1, low: 0), "for 'write-buffer-high-water-mark'", "which every stack can hold" },
        { () => ConnectionSettings.Default.WithWriteBufferWaterMarks(high: 16, low: -1), "'-1b' for 'write-buffer-low-water-mark'", "a size from 0b to below write-buffer-high-water-mark (16b)" },
        { () => ConnectionSettings.Default.WithWriteBufferWaterMarks(high: 16, low: 16), "'16b' for 'write-buffer-low-water-mark'", "a size from 0b to below write-buffer-high-water-mark (16b)" },
    };

    [Theory]
    [MemberData(nameof(PastTheLimits))]
    public void A_value_one_step_past_a_limit_is_refused_naming_the_key_the_value_and_what_is_allowed(Func<ConnectionSettings> make, string named, string allowed) =>
        Refusal.Assert(make, named, allowed);
}
