using FlushBatching.Tcp;

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
        Assert.Equal(1024 * 1024, settings.WriteBufferHighWaterMark);
        Assert.Equal(512 * 1024, settings.WriteBufferLowWaterMark);
        Assert.Null(settings.Tls);
    }

    [Fact]
    public void Every_key_can_be_overridden_from_hocon_text()
    {
        var settings = ConnectionSettings.Default
            .With("tcp-nodelay", "off")
            .With("tcp-keepalive", "off")
            .With("send-buffer-size", "64k")
            .With("receive-buffer-size", "0b")
            .With("backlog", "16")
            .With("connection-timeout", "2s")
            .With("write-buffer-high-water-mark", "4m")
            .With("write-buffer-low-water-mark", "2m")
            .With("maximum-frame-size", "64000b")
            .With("byte-order", "big-endian")
            .With("batching.max-pending-writes", "7");
        Assert.False(settings.NoDelay);
        Assert.False(settings.KeepAlive);
        Assert.Equal(64 * 1024, settings.SendBufferSize);
        Assert.Equal(0, settings.ReceiveBufferSize);
        Assert.Equal(16, settings.Backlog);
        Assert.Equal(TimeSpan.FromSeconds(2), settings.ConnectTimeout);
        Assert.Equal(4 * 1024 * 1024, settings.WriteBufferHighWaterMark);
        Assert.Equal(2 * 1024 * 1024, settings.WriteBufferLowWaterMark);
        Assert.Equal(64000, settings.Framing.MaximumFrameSize);
        Assert.Equal(FlushBatching.Framing.ByteOrder.BigEndian, settings.Framing.ByteOrder);
        Assert.Equal(7, settings.Batching.MaxPendingWrites);
    }

    [Theory]
    [InlineData("hostname")]
    [InlineData("batching.max-pending-messages")]
    public void An_unknown_key_is_refused_naming_the_keys_there_are(string key)
    {
        var e = Assert.Throws<InvalidSettingException>(() => ConnectionSettings.Default.With(key, "1"));
        Assert.Equal(key, e.Key);
        Assert.Contains("one of the keys", e.Allowed);
    }

    [Fact]
    public void The_low_water_mark_must_stay_below_the_high_one()
    {
        Assert.Throws<InvalidSettingException>(() => ConnectionSettings.Default.WithWriteBufferWaterMarks(100, 100));
        var settings = ConnectionSettings.Default.WithWriteBufferWaterMarks(100, 99);
        Assert.Equal(99, settings.WriteBufferLowWaterMark);
    }
}
