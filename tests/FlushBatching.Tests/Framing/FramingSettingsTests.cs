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

    [Theory]
    [InlineData("maximum-frame-size", "31999b", "from 32000b")]
    [InlineData("maximum-frame-size", "0", "from 32000b")]
    [InlineData("maximum-frame-size", "-128000b", "from 32000b")]
    [InlineData("maximum-frame-size", "8g", "from 32000b")]
    [InlineData("byte-order", "middle-endian", "little-endian or big-endian")]
    public void A_bad_value_is_refused_naming_the_key(string key, string value, string allowed)
    {
        var e = Assert.Throws<InvalidSettingException>(() => FramingSettings.Default.With(key, value));
        Assert.Equal(key, e.Key);
        Assert.Equal(value, e.Value);
        Assert.Contains(allowed, e.Allowed);
    }
}
