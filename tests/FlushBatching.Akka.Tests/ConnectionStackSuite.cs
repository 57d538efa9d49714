using System.Net;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Threading.Channels;
using FlushBatching.Akka.Tests.Support;
using FlushBatching.Batching;
using FlushBatching.Diagnostics;
using FlushBatching.Framing;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Admission;
using FlushBatching.Tcp.Io;
using FlushBatching.Tests.Support;
using Google.Protobuf;
using Microsoft.Extensions.Time.Testing;
using Xunit.Abstractions;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// What every I/O stack must do behind the adapter's seam, driven through <see cref="IConnectionStack"/> and
/// <see cref="ITransportConnection"/> on loopback. Each stack gets one derived class.
/// </summary>
public abstract partial class ConnectionStackSuite(ITestOutputHelper output) : IAsyncLifetime
{
    private readonly List<IConnectionStack> _stacks = [];
    private readonly Channel<ITransportConnection> _inbound = Channel.CreateUnbounded<ITransportConnection>();
    private readonly Channel<Exception> _rejected = Channel.CreateUnbounded<Exception>();

    private protected abstract IConnectionStack CreateStack(ConnectionSettings settings);

    // Unsent bytes above which the stack's connection refuses writes now.
    private protected abstract long HighWaterMarkOf(ITransportConnection connection);

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync()
    {
        foreach (var stack in _stacks)
        {
            await Poll.Within(stack.StopListeningAsync());
            await Poll.Within(stack.StopAsync());
        }
    }

    [Theory]
    [InlineData(ByteOrder.LittleEndian)]
    [InlineData(ByteOrder.BigEndian)]
    public async Task Payloads_small_and_large_arrive_whole_and_in_order_with_the_byte_order_configured(ByteOrder byteOrder)
    {
        var settings = ConnectionSettings.Default.WithFraming(FramingSettings.Default.WithByteOrder(byteOrder));
        var (client, server) = await Connect(settings, settings);
        var received = new Receiver();
        server.StartReading(received);

        // Sizes from empty to the largest payload: small ones are combined, large ones pass through.
        var sizes = new[] { 0, 1, 3, 100, 8_000, 9_000, 60_000, settings.Framing.MaximumPayloadSize, 7 };
        foreach (var size in sizes)
        {
            Assert.True(client.TryWrite(ByteString.CopyFrom(Enumerable.Range(0, size).Select(i => (byte)(i * 7 + size)).ToArray())));
        }

        foreach (var size in sizes)
        {
            var payload = await Poll.Within(received.Payloads.Reader.ReadAsync().AsTask());
            Assert.Equal(Enumerable.Range(0, size).Select(i => (byte)(i * 7 + size)).ToArray(), payload.ToByteArray());
        }
    }

    [Fact]
    public async Task Writes_sent_one_at_a_time_far_past_the_high_water_mark_are_never_refused()
    {
        // What has gone out stops counting as unsent: a count that kept a little of each write would pass the mark
        // long before the 200th.
        const int high = 64 * 1024;
        var settings = ConnectionSettings.Default.WithWriteBufferWaterMarks(high, high / 2);
        var (client, server) = await Connect(settings, settings);
        var received = new Receiver();
        server.StartReading(received);
        var payload = ByteString.CopyFrom(new byte[1000]);
        for (var i = 0; i < 200; i++)
        {
            Assert.True(client.TryWrite(payload), $"write {i} was refused although every earlier one had arrived");
            await Poll.Within(received.Payloads.Reader.ReadAsync().AsTask());
        }
    }

    [Fact]
    public async Task With_the_marks_unset_a_connection_raises_its_high_water_mark_on_a_fast_link()
    {
        var settings = ConnectionSettings.Default;
        var (client, server) = await Connect(settings, ConnectionSettings.Default);
        server.StartReading(new Receiver());
        var start = settings.WriteBufferHighWaterMark;

        await SendThroughBacklogsUntil(client, mark => mark > start);

        Assert.InRange(HighWaterMarkOf(client), 2 * start, 4 * start);
    }

    [Fact]
    public async Task With_the_marks_unset_a_connection_whose_link_slows_brings_its_high_water_mark_back_to_its_start()
    {
        // On a clock that stands still every drain took no time; on one that moves 10 s at each read, every one is slow.
        var clock = new FakeTimeProvider();
        var settings = ConnectionSettings.Default.WithTimeProvider(clock);
        var (client, server) = await Connect(settings, ConnectionSettings.Default);
        server.StartReading(new Receiver());
        var start = settings.WriteBufferHighWaterMark;

        await SendThroughBacklogsUntil(client, mark => mark != start);
        Assert.Equal(4 * start, HighWaterMarkOf(client));

        clock.AutoAdvanceAmount = TimeSpan.FromSeconds(10);
        await SendThroughBacklogsUntil(client, mark => mark != 4 * start);
        Assert.Equal(start, HighWaterMarkOf(client));
    }

    [Fact]
    public async Task Payloads_wait_until_reading_starts_then_arrive_in_order_counted_on_the_receiving_meter()
    {
        using var clientMetrics = new FlushBatchingMetrics();
        using var serverMetrics = new FlushBatchingMetrics();
        using var sent = new MeterRecorder(clientMetrics);
        using var received = new MeterRecorder(serverMetrics);
        var (client, server) = await Connect(ConnectionSettings.Default.WithMetrics(clientMetrics), ConnectionSettings.Default.WithMetrics(serverMetrics));
        for (var i = 0; i < 100; i++)
        {
            Assert.True(client.TryWrite(ByteString.CopyFrom(BitConverter.GetBytes(i))));
        }

        // An event, not a delay: every frame has gone to the client's socket, so on loopback it waits at the server (in
        // its socket or the sockets stack's pipe, or held by the DotNetty stack, which reads once at once to hear the peer
        // speak), and is delivered only once reading starts.
        await Poll.Until(() => sent.Sum("flushbatching.frames.sent") == 100, "the client to send every frame");

        var receiver = new Receiver();
        server.StartReading(receiver);
        for (var i = 0; i < 100; i++)
        {
            Assert.Equal(i, BitConverter.ToInt32((await Poll.Within(receiver.Payloads.Reader.ReadAsync().AsTask())).Span));
        }

        await Poll.Until(() => received.Sum("flushbatching.frames.received") == 100 && received.Sum("flushbatching.bytes.received") == 400, "the server's meter to count every frame and payload byte");
    }

    [Fact]
    public async Task A_frame_above_the_maximum_from_the_peer_ends_the_connection_with_an_InvalidFrameException()
    {
        var small = ConnectionSettings.Default.WithFraming(FramingSettings.Default.WithMaximumFrameSize(FramingSettings.MinimumMaximumFrameSize));
        var (client, server) = await Connect(ConnectionSettings.Default, small);
        var received = new Receiver();
        server.StartReading(received);

        Assert.True(client.TryWrite(ByteString.CopyFrom(new byte[FramingSettings.MinimumMaximumFrameSize + 10])));

        Assert.IsType<InvalidFrameException>(await Poll.Within(received.Closed.Task));
    }

    [Fact]
    public async Task Tls_protocol_versions_in_the_settings_reach_the_handshake()
    {
        using var certificate = new SelfSignedCertificate();
        var tls = TlsSettings.FromPfxFile(certificate.PfxPath, SelfSignedCertificate.Password).WithSuppressValidation(true);
        ConnectionSettings Only(SslProtocols protocols) => ConnectionSettings.Default.WithTls(tls.WithProtocols(protocols));

        // Agreeing versions connect; a client held to TLS 1.2 against a server held to TLS 1.3 does not.
        var (client, _) = await Connect(Only(SslProtocols.Tls12), Only(SslProtocols.Tls12 | SslProtocols.Tls13));
        Assert.True(client.TryWrite(ByteString.CopyFromUtf8("agreed")));
        if (OperatingSystem.IsMacOS())
        {
            // No TLS 1.3 in .NET's TLS there: a server held to it is refused before it starts, not at every handshake.
            Assert.Throws<PlatformNotSupportedException>(() => tls.WithProtocols(SslProtocols.Tls13));
            return;
        }

        var endpoint = await Listen(Only(SslProtocols.Tls13));
        // Refused by the handshake on both ends, not timed out or dropped for another reason.
        var refused = await Assert.ThrowsAsync<AuthenticationException>(() => Poll.Within(Stack(Only(SslProtocols.Tls12)).ConnectAsync(endpoint, Only(SslProtocols.Tls12))));
        Assert.StartsWith("The TLS handshake with ", refused.Message);
        var rejected = await Poll.Within(_rejected.Reader.ReadAsync().AsTask());
        // The server's side ends on the handshake's error, or, when the client's close comes first, on the close: a
        // dropped set-up either way, never the connect bound.
        Assert.IsType<IOException>(rejected);
        Assert.DoesNotContain(SettingKeys.ConnectTimeout, rejected.Message);
    }

    [Fact]
    public async Task A_server_that_closes_during_the_TLS_handshake_fails_the_connect_as_a_handshake_refusal()
    {
        // A peer that reads the client's hello and closes, as one refusing this node's TLS versions does after its
        // alert: a client may see only the close (DotNetty's TlsHandler can, and SslStream does when no alert came),
        // and the connect still says the handshake failed.
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        var closing = Task.Run(async () =>
        {
            using var peer = await listener.AcceptSocketAsync();
            await peer.ReceiveAsync(new byte[4096]);
            peer.Shutdown(SocketShutdown.Both);
        });
        using var certificate = new SelfSignedCertificate();
        var settings = ConnectionSettings.Default.WithTls(TlsSettings.FromPfxFile(certificate.PfxPath, SelfSignedCertificate.Password).WithSuppressValidation(true));

        var refused = await Assert.ThrowsAsync<AuthenticationException>(() => Poll.Within(Stack(settings).ConnectAsync((IPEndPoint)listener.LocalEndpoint, settings)));
        Assert.StartsWith("The TLS handshake with ", refused.Message);
        Assert.Contains("closed the connection during the handshake", refused.Message);
        await Poll.Within(closing);
    }

    // A close that meets the peer's frames arriving, over TLS, 200 times. The sockets stack once sent TLS's close_notify
    // there, which OpenSSL ran beside a read of the same connection, and the process died (a segmentation fault in
    // libssl): each stack must end both sides, every time, and the test host live.
    [Fact]
    public async Task A_tls_connection_closed_while_its_peer_keeps_sending_ends_both_sides_every_time()
    {
        using var certificate = new SelfSignedCertificate();
        var tls = ConnectionSettings.Default.WithTls(TlsSettings.FromPfxFile(certificate.PfxPath, SelfSignedCertificate.Password).WithSuppressValidation(true));

        // Unbatched, each payload is a TLS record of its own: the closing side decrypts often.
        var endpoint = await Listen(tls.WithBatching(BatchingSettings.Default.WithEnabled(false)));
        var clients = Stack(tls);
        var payload = ByteString.CopyFrom(new byte[100]);
        for (var round = 0; round < 200; round++)
        {
            var client = await Poll.Within(clients.ConnectAsync(endpoint, tls));
            var server = await Poll.Within(_inbound.Reader.ReadAsync().AsTask());
            var atClient = new Receiver();
            var atServer = new Receiver();
            client.StartReading(atClient);
            server.StartReading(atServer);
            var sending = Task.Run(async () =>
            {
                while (!server.Completion.IsCompleted)
                {
                    if (!server.TryWrite(payload))
                    {
                        await Task.Delay(1);
                    }
                }
            });

            if (round % 2 == 1)
            {
                await Poll.Within(atClient.Payloads.Reader.ReadAsync().AsTask());
            }

            await Poll.Within(client.CloseAsync());
            await Poll.Within(atServer.Closed.Task);
            await Poll.Within(sending);
        }
    }

    [Fact]
    public async Task A_client_that_refuses_the_server_certificate_fails_with_the_reason_of_the_refusal()
    {
        using var certificate = new SelfSignedCertificate();
        var tls = TlsSettings.FromPfxFile(certificate.PfxPath, SelfSignedCertificate.Password);
        var endpoint = await Listen(ConnectionSettings.Default.WithTls(tls.WithSuppressValidation(true)));

        var refused = await Assert.ThrowsAsync<AuthenticationException>(() =>
            Poll.Within(Stack(ConnectionSettings.Default).ConnectAsync(endpoint, ConnectionSettings.Default.WithTls(TlsSettings.ForClient()))));

        Assert.Contains("certificate", refused.Message, StringComparison.OrdinalIgnoreCase);
    }

    [LinuxTheory("reads socket options as the kernel reports them (ss)")]
    [InlineData(true)]
    [InlineData(false)]
    public async Task Both_ends_of_a_connection_get_the_configured_buffer_sizes_and_keep_alive(bool keepAlive)
    {
        // One rule for both stacks (the core's SocketOptions), read back from the kernel, not from the stack's own view.
        var settings = ConnectionSettings.Default.WithKeepAlive(keepAlive).WithSendBufferSize(64 * 1024).WithReceiveBufferSize(96 * 1024);
        var endpoint = await Listen(settings);
        await Poll.Within(Stack(settings).ConnectAsync(endpoint, settings));
        await Poll.Within(_inbound.Reader.ReadAsync().AsTask());

        var ends = KernelSocketOptions.Established(endpoint.Port);
        Assert.Equal(2, ends.Count);
        Assert.All(ends, end => Assert.Equal(new KernelSocketOptions(end.LocalPort, 2 * 96 * 1024, 2 * 64 * 1024, keepAlive), end));
    }

    private protected IConnectionStack Stack(ConnectionSettings settings)
    {
        var stack = CreateStack(settings);
        _stacks.Add(stack);
        return stack;
    }

    // A stack listening on loopback whose inbound connections and rejections the test reads.
    private Task<IPEndPoint> Listen(ConnectionSettings settings) =>
        Stack(settings).ListenAsync(new IPEndPoint(IPAddress.Loopback, 0), InboundSlots.For(settings), c => _inbound.Writer.TryWrite(c), e => _rejected.Writer.TryWrite(e));

    private protected async Task<(ITransportConnection Client, ITransportConnection Server)> Connect(ConnectionSettings client, ConnectionSettings server)
    {
        var endpoint = await Listen(server);
        var outbound = await Poll.Within(Stack(client).ConnectAsync(endpoint, client));
        return (outbound, await Poll.Within(_inbound.Reader.ReadAsync().AsTask()));
    }

    // The marks follow only the drain of a backlog the link held. In a round whose backlog the event loop held instead
    // (the writer refused on bytes queued for a busy loop, the socket taking each hand-off at once), or whose drains
    // were each too short to measure, the marks rightly stay where they are: a test round on a busy machine can be such
    // a round (seen in CI, the mark still at its start after one). So rounds go on until the mark moves, five at most,
    // and the caller asserts where it moved to.
    private async Task SendThroughBacklogsUntil(ITransportConnection connection, Func<long, bool> moved)
    {
        for (var round = 0; round < 5 && !moved(HighWaterMarkOf(connection)); round++)
        {
            await SendThroughABacklog(connection);
        }
    }

    // 20 MB as fast as the connection takes them, to a peer that reads, then until all is sent: the writes outrun the
    // socket, most rounds. Whether the link held a backlog is for the mark to say: a refused write does not tell, it
    // may have waited for the event loop.
    private static async Task SendThroughABacklog(ITransportConnection connection)
    {
        var payload = ByteString.CopyFrom(new byte[100_000]);
        for (var i = 0; i < 200; i++)
        {
            while (!connection.TryWrite(payload))
            {
                await Task.Delay(1);
            }
        }

        await Poll.Until(() => connection.UnsentBytes == 0, "the connection to send everything");
    }

    private protected sealed class Receiver : IPayloadReceiver
    {
        public Channel<ByteString> Payloads { get; } = Channel.CreateUnbounded<ByteString>();

        public TaskCompletionSource<Exception?> Closed { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public void OnPayload(ByteString payload) => Payloads.Writer.TryWrite(payload);

        public void OnClosed(Exception? reason) => Closed.TrySetResult(reason);
    }
}
