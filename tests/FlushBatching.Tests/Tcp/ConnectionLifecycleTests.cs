using System.Globalization;
using System.Net;
using System.Net.Sockets;
using FlushBatching.Framing;
using FlushBatching.Tcp;
using FlushBatching.Tests.Support;

namespace FlushBatching.Tests.Tcp;

/// <summary>
/// How a connection starts and ends on real loopback sockets: one handler, a close bounded by its time-out whatever the
/// peer does, a reset that ends it with the reset as the reason, and the socket released before anyone is told.
/// </summary>
public sealed class ConnectionLifecycleTests
{
    private readonly TimerCountingClock _clock = new();

    [Fact]
    public async Task A_connection_takes_one_handler_and_refuses_a_second_or_none()
    {
        await using var loopback = Loopback.Listen();
        var (client, _) = await loopback.ConnectAsync();
        Assert.Equal("handler", Assert.Throws<ArgumentNullException>(() => client.Start(null!)).ParamName);
        client.Start(new FrameCollector());
        var e = Assert.Throws<InvalidOperationException>(() => client.Start(new FrameCollector()));
        Assert.Equal("This connection already has a frame handler.", e.Message);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task Closing_an_idle_connection_ends_once_the_peer_ends_its_side_without_waiting_for_the_bound(bool reading)
    {
        // The clock stands still, so the close's deadline never fires: only the exchange of ends can finish the close,
        // whether or not this side has a handler reading.
        await using var loopback = Loopback.Listen();
        var (client, server) = await loopback.ConnectAsync(ConnectionSettings.Default.WithTimeProvider(_clock));
        var atClient = new FrameCollector();
        if (reading)
        {
            client.Start(atClient);
        }

        server.Start(new FrameCollector());

        await Poll.Within(client.CloseAsync());
        Assert.Null(client.CloseReason);
        Assert.Equal(0, _clock.ArmedTimers);
        if (reading)
        {
            Assert.Null(await atClient.WaitClosedAsync());
            Assert.True(atClient.CompletedWhenClosed);
        }
    }

    [Fact]
    public async Task A_close_whose_peer_never_ends_its_side_waits_for_it_then_ends_at_the_bound_without_a_reason()
    {
        await using var loopback = Loopback.Listen();
        var (client, _) = await loopback.ConnectAsync(ConnectionSettings.Default.WithTimeProvider(_clock));

        // The peer has no handler, so it never reads the end of our side and never ends its own.
        var closing = client.CloseAsync();
        await Task.Delay(200);
        Assert.False(closing.IsCompleted, "the close ended before the peer ended its side or the bound passed");

        _clock.Advance(ConnectionSettings.Default.CloseTimeout);
        await Poll.Within(closing);
        Assert.Null(client.CloseReason);
    }

    [Theory]
    [InlineData("")]
    [InlineData("de-DE")] // a culture that groups digits with '.': the log line must not change with it
    public async Task A_close_whose_peer_stopped_reading_is_aborted_at_the_bound_naming_the_key_and_what_was_left(string culture)
    {
        var before = CultureInfo.CurrentCulture;
        CultureInfo.CurrentCulture = CultureInfo.GetCultureInfo(culture);
        try
        {
            await AbortedAtTheBoundNamingWhatWasLeft();
        }
        finally
        {
            CultureInfo.CurrentCulture = before;
        }
    }

    private async Task AbortedAtTheBoundNamingWhatWasLeft()
    {
        // More than the peer's pipe and both kernels' buffers hold, all under a high-water mark that takes it.
        var settings = ConnectionSettings.Default.WithTimeProvider(_clock).WithWriteBufferWaterMarks(64 * 1024 * 1024, 32 * 1024 * 1024)
            .WithSendBufferSize(64 * 1024);
        await using var loopback = Loopback.Listen(ConnectionSettings.Default.WithReceiveBufferSize(64 * 1024));
        var (client, _) = await loopback.ConnectAsync(settings);
        var atClient = new FrameCollector();
        client.Start(atClient);
        var frame = new byte[64 * 1024];
        for (var i = 0; i < 128; i++)
        {
            Assert.True(client.TryWrite(frame));
        }

        var closing = client.CloseAsync();
        _clock.Advance(ConnectionSettings.Default.CloseTimeout);
        await Poll.Within(closing);

        var e = Assert.IsType<TimeoutException>(await atClient.WaitClosedAsync());
        Assert.Same(e, client.CloseReason);
        Assert.Contains(client.LocalEndPoint.ToString(), e.Message);
        Assert.Contains("akka.remote.flush-wait-on-shutdown", e.Message);
        Assert.Contains("2s", e.Message);
        Assert.Matches(@"with \d{1,3}(,\d{3})* bytes unsent", e.Message);
    }

    [Fact]
    public async Task A_peers_reset_ends_a_connection_nobody_reads_yet_with_the_reset_as_the_reason()
    {
        await using var loopback = Loopback.Listen();
        using var peer = await RawPeer.ConnectAsync(loopback.EndPoint);
        var server = await loopback.AcceptAsync();

        peer.LingerState = new LingerOption(true, 0); // closing now sends a reset
        peer.Close();

        await Poll.Within(server.Completion);
        Assert.Equal(SocketError.ConnectionReset, Assert.IsType<SocketException>(server.CloseReason).SocketErrorCode);
    }

    [Fact]
    public async Task A_send_that_fails_after_the_peer_ended_its_side_ends_a_connection_nobody_reads_with_the_error()
    {
        // The peer ends its side (our receive ends cleanly, and with no handler that ends nothing), then resets while
        // we are still sending: only the failed send can end the connection, and it must.
        // Small buffers at both ends (set before the connection, so the kernel does not grow them), so that most of
        // what is written stays queued here: there is still sending to fail when the reset comes.
        using var listening = RawPeer.Listen(receiveBufferSize: 64 * 1024);
        var settings = ConnectionSettings.Default.WithWriteBufferWaterMarks(64 * 1024 * 1024, 32 * 1024 * 1024).WithSendBufferSize(64 * 1024);
        var client = await FramedConnector.ConnectAsync((IPEndPoint)listening.LocalEndPoint!, settings);
        using var peer = await listening.AcceptAsync();
        var frame = new byte[64 * 1024];
        for (var i = 0; i < 128; i++)
        {
            Assert.True(client.TryWrite(frame));
        }

        Assert.True(client.UnsentBytes > 1024 * 1024, $"only {client.UnsentBytes} bytes left to send");

        peer.Shutdown(SocketShutdown.Send);

        // Time for our receive to see that end first; were the reset to come first, the receive would end the
        // connection with it instead, which this test accepts too.
        await Task.Delay(100);
        peer.Close(); // our frames unread in it: the kernel resets the connection

        var ended = await Record.ExceptionAsync(() => Poll.Within(client.Completion));
        client.Abort();
        Assert.Null(ended);
        Assert.True(client.CloseReason is SocketException or IOException, $"ended by {client.CloseReason?.ToString() ?? "nothing"}");
    }

    [Fact]
    public async Task Abort_ends_a_connection_nobody_reads_whose_peer_filled_its_receive_pipe()
    {
        // The server's receive loop waits for room in a pipe no handler reads: the abort must end that wait too, or the
        // connection never completes and holds its socket and its megabyte for good.
        var settings = ConnectionSettings.Default.WithWriteBufferWaterMarks(64 * 1024 * 1024, 32 * 1024 * 1024).WithSendBufferSize(64 * 1024);
        await using var loopback = Loopback.Listen(ConnectionSettings.Default.WithReceiveBufferSize(64 * 1024));
        var (client, server) = await loopback.ConnectAsync(settings);
        var frame = new byte[64 * 1024];
        for (var i = 0; i < 128; i++)
        {
            Assert.True(client.TryWrite(frame));
        }

        // The client stops sending once the server's pipe has paused (1 MB) and both small socket buffers are full.
        await Poll.Until(
            SendStall.Seen(() => client.UnsentBytes, written: 128L * frame.Length, sentMoreThan: 1024 * 1024),
            "the client's sending to stall on a full server pipe");
        server.Abort();
        await Poll.Within(server.Completion);
    }

    [Fact]
    public async Task Dispose_returns_once_the_socket_is_released()
    {
        await using var loopback = Loopback.Listen();
        var (client, _) = await loopback.ConnectAsync();
        await client.DisposeAsync();
        Assert.True(client.Completion.IsCompleted);
    }

    [Fact]
    public async Task A_frame_of_the_maximum_size_arrives_whole_when_that_is_megabytes()
    {
        // Larger than the receive pipe's 1 MB floor and than the socket's buffers: it completes across many reads.
        var settings = ConnectionSettings.Default.WithFraming(FramingSettings.Default.WithMaximumFrameSize(3 * 1024 * 1024));
        await using var loopback = Loopback.Listen(settings);
        var (client, server) = await loopback.ConnectAsync(settings);
        var atServer = new FrameCollector();
        server.Start(atServer);
        var frame = Enumerable.Range(0, settings.Framing.MaximumFrameSize - 4).Select(i => (byte)i).ToArray();

        Assert.True(client.TryWrite(frame));
        await atServer.WaitForCountAsync(1);
        Assert.Equal(frame, atServer.Frames[0]);
    }
}
