using FlushBatching.Framing;

namespace FlushBatching.Tests.Framing;

public class FramingSettingsTests
{
    [Fact]
    public void Defaults_are_akka_remotes()
    {
        Assert.Equal(128000, FramingSettings.Default.MaximumFrameSize);
        Assert.Equal(127996, FramingSettings.Default.MaximumPayloadSize);
        Assert.Equal(ByteOrder.LittleEndian, FramingSettings.Default.ByteOrder);
    }

    [Theory]
    [InlineData(31999)]
    [InlineData(int.MaxValue + 1L)]
    public void A_maximum_frame_size_outside_32000_to_int_MaxValue_is_refused(long bytes)
    {
        var e = Assert.Throws<InvalidSettingException>(() => FramingSettings.Default.WithMaximumFrameSize(bytes));
        Assert.Equal(SettingKeys.MaximumFrameSize, e.Key);
        Assert.Equal(int.MaxValue, FramingSettings.Default.WithMaximumFrameSize(int.MaxValue).MaximumFrameSize);
    }

    [Fact]
    public void A_refused_maximum_frame_size_is_named_with_what_is_allowed()
    {
        var error = Assert.Throws<InvalidSettingException>(() => FramingSettings.Default.WithMaximumFrameSize(31999));
        Assert.Contains("'31999b' for 'maximum-frame-size'", error.Message);
        Assert.Contains("a size from 32000b to 2147483647b", error.Message);
    }

    [Fact]
    public void A_byte_order_that_is_not_one_is_refused_naming_both()
    {
        var error = Assert.Throws<InvalidSettingException>(() => FramingSettings.Default.WithByteOrder((ByteOrder)7));
        Assert.Contains("'7' for 'byte-order'", error.Message);
        Assert.Contains("little-endian or big-endian", error.Message);
    }

    [Fact]
    public void The_log_line_names_the_frame_size_and_the_byte_order()
    {
        Assert.Equal("maximum-frame-size = 128000b, byte-order = little-endian", FramingSettings.Default.ToString());
        Assert.Equal("maximum-frame-size = 32000b, byte-order = big-endian", FramingSettings.Default.WithMaximumFrameSize(32000).WithByteOrder(ByteOrder.BigEndian).ToString());
    }
}
