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
        Assert.Equal(FramingSettings.MaximumFrameSizeKey, e.Key);
        Assert.Equal(int.MaxValue, FramingSettings.Default.WithMaximumFrameSize(int.MaxValue).MaximumFrameSize);
    }
}
