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

    [Theory]
    [InlineData(-1)]
    [InlineData(int.MaxValue + 1L)]
    public void A_buffer_size_outside_what_a_socket_takes_is_refused_naming_its_key(long bytes)
    {
        var e = Assert.Throws<InvalidSettingException>(() => ConnectionSettings.Default.WithReceiveBufferSize(bytes));
        Assert.Equal(ConnectionSettings.ReceiveBufferSizeKey, e.Key);
        Assert.Equal(0, ConnectionSettings.Default.WithReceiveBufferSize(0).ReceiveBufferSize);
    }

    [Fact]
    public void The_low_water_mark_must_stay_below_the_high_one()
    {
        Assert.Throws<InvalidSettingException>(() => ConnectionSettings.Default.WithWriteBufferWaterMarks(100, 100));
        var settings = ConnectionSettings.Default.WithWriteBufferWaterMarks(100, 99);
        Assert.Equal(99, settings.WriteBufferLowWaterMark);
    }
}
