using System.Net.Sockets;
using FlushBatching.Framing;
using FlushBatching.Tcp;
using FlushBatching.Tests.Support;

namespace FlushBatching.Tests.Tcp;

/// <summary>
/// A raw socket sends what no framed peer would. Only that connection ends, with the reason; a good
/// connection on the same listener keeps working.
/// </summary>
public sealed class BadInputTests : IAsyncLifetime
{
    private readonly List<Exception> _unobserved = [];
    private Loopback _loopback = null!;
    private FramedConnection _goodClient = null!;
    private FrameCollector _goodReceived = null!;

    public async Task InitializeAsync()
    {
        TaskScheduler.UnobservedTaskException += RecordUnobserved;
        _loopback = Loopback.Listen();
        (_goodClient, var goodServer) = await _loopback.ConnectAsync();
        _goodReceived = new FrameCollector();
        goodServer.Start(_goodReceived);
    }

    // Bad input must end in a reported reason, never in a task exception nobody observes.
    public async Task DisposeAsync()
    {
        await _loopback.DisposeAsync();
        GC.Collect();
        GC.WaitForPendingFinalizers();
        TaskScheduler.UnobservedTaskException -= RecordUnobserved;
        lock (_unobserved)
        {
            Assert.Empty(_unobserved);
        }
    }

    private void RecordUnobserved(object? sender, UnobservedTaskExceptionEventArgs e)
    {
        lock (_unobserved)
        {
            _unobserved.Add(e.Exception);
        }
    }

    private async Task<Exception?> SendRawAsync(byte[] bytes, Action<Socket>? then = null)
    {
        using var raw = new Socket(SocketType.Stream, ProtocolType.Tcp);
        await raw.ConnectAsync(_loopback.EndPoint);
        var server = await _loopback.AcceptAsync();
        var received = new FrameCollector();
        server.Start(received);
        await raw.SendAsync(bytes);
        then?.Invoke(raw);

        var reason = await received.WaitClosedAsync();
        Assert.Equal(1, received.ClosedCalls);
        await Poll.Within(server.Completion);
        await AssertGoodConnectionStillWorksAsync();
        return reason;
    }

    private async Task AssertGoodConnectionStillWorksAsync()
    {
        var before = _goodReceived.Count;
        Assert.True(_goodClient.TryWrite([42]));
        await _goodReceived.WaitForCountAsync(before + 1);
    }

    [Fact]
    public async Task A_length_above_the_maximum_drops_the_connection_before_the_frame_arrives()
    {
        var header = new byte[4];
        FrameEncoder.WriteHeader(header, 1_000_000_000, ByteOrder.LittleEndian);
        var reason = await SendRawAsync(header);
        Assert.Contains("1000000000 bytes", Assert.IsType<InvalidFrameException>(reason).Message);
    }

    [Fact]
    public async Task Garbage_drops_the_connection()
    {
        var reason = await SendRawAsync("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"u8.ToArray());
        Assert.IsType<InvalidFrameException>(reason);
    }

    [Fact]
    public async Task A_negative_length_drops_the_connection()
    {
        var reason = await SendRawAsync([0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3]);
        Assert.Contains("negative", Assert.IsType<InvalidFrameException>(reason).Message);
    }

    [Fact]
    public async Task A_reset_in_the_middle_of_a_frame_drops_the_connection_with_the_reason()
    {
        var bytes = new byte[14];
        FrameEncoder.WriteHeader(bytes, 100, ByteOrder.LittleEndian);
        var reason = await SendRawAsync(bytes, raw =>
        {
            raw.LingerState = new LingerOption(true, 0);
            raw.Close();
        });
        // The reset may come before the 14 bytes are read (the reset itself is the reason) or after (the stream ended
        // inside the frame): either names what happened, nothing else does.
        switch (reason)
        {
            case SocketException socket:
                Assert.Equal(SocketError.ConnectionReset, socket.SocketErrorCode);
                break;
            case InvalidFrameException frame:
                Assert.Contains("inside a frame", frame.Message);
                break;
            default:
                Assert.Fail($"expected a reset or a frame cut short, got {reason?.ToString() ?? "an orderly close"}");
                break;
        }
    }

    [Fact]
    public async Task A_stream_that_ends_in_the_middle_of_a_frame_drops_the_connection_naming_the_leftover()
    {
        var bytes = new byte[14];
        FrameEncoder.WriteHeader(bytes, 100, ByteOrder.LittleEndian);
        var reason = await SendRawAsync(bytes, raw => raw.Shutdown(SocketShutdown.Send));
        Assert.Contains("14 bytes of an unfinished frame", Assert.IsType<InvalidFrameException>(reason).Message);
    }

    [Fact]
    public async Task A_failed_tls_handshake_is_reported_and_the_listener_keeps_serving()
    {
        using var certificate = new SelfSignedCertificate();
        var tls = ConnectionSettings.Default.WithTls(TlsSettings.FromPfxFile(certificate.PfxPath, SelfSignedCertificate.Password));
        await using var loopback = Loopback.Listen(tls);
        using (var raw = new Socket(SocketType.Stream, ProtocolType.Tcp))
        {
            await raw.ConnectAsync(loopback.EndPoint);
            await raw.SendAsync(new byte[64]);
            Assert.Contains("dropped while setting up", (await loopback.WaitRejectedAsync()).Message);
        }

        var (client, server) = await loopback.ConnectAsync(ConnectionSettings.Default.WithTls(TlsSettings.ForClient().WithSuppressValidation(true)));
        var received = new FrameCollector();
        server.Start(received);
        client.TryWrite([7]);
        await received.WaitForCountAsync(1);
    }

    [Fact]
    public async Task A_local_payload_above_the_maximum_is_refused_naming_its_size_and_the_limit_and_the_connection_goes_on()
    {
        var e = Assert.Throws<ArgumentException>(() => _goodClient.TryWrite(new byte[200_000]));
        Assert.Contains("200000 bytes", e.Message);
        Assert.Contains("maximum-frame-size is 128000 bytes", e.Message);
        await AssertGoodConnectionStillWorksAsync();
    }
}
