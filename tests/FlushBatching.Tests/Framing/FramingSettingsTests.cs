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

    [Fact]
    public void Keys_can_be_overridden_from_hocon_text()
    {
        var settings = FramingSettings.Default.With("maximum-frame-size", "256000b").With("byte-order", "big-endian");
        Assert.Equal(256000, settings.MaximumFrameSize);
        Assert.Equal(ByteOrder.BigEndian, settings.ByteOrder);
    }
}
