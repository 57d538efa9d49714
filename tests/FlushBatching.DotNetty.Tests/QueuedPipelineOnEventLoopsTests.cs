using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Net;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using DotNetty.Handlers.Tls;
using DotNetty.Transport.Bootstrapping;
using DotNetty.Transport.Channels;
using DotNetty.Transport.Channels.Sockets;
using FlushBatching.Batching;
using FlushBatching.Diagnostics;
using FlushBatching.DotNetty.Tests.Support;
using FlushBatching.Framing;
using FlushBatching.Tcp;
using FlushBatching.Tests.Support;
using Xunit.Abstractions;

namespace FlushBatching.DotNetty.Tests;

/// <summary>
/// The pipeline FlushBatching's Akka transport runs, built by a user from FlushBatching.DotNetty's public types as
/// docs/dotnetty.md shows it (<c>[tls] → PayloadFrameDecoder → BatchingWriterHandler { ExplicitFlushEndsBurst } →
/// QueuedChannelWriter → the application</c>) on both ends, on DotNetty's own <see cref="MultithreadEventLoopGroup"/>,
/// over real sockets on loopback.
/// </summary>
public sealed class QueuedPipelineOnEventLoopsTests : IAsyncLifetime
{
    private readonly MultithreadEventLoopGroup _group = new(2);
    private readonly SelfSignedCertificate _certificate = new();
    private readonly List<IChannel?> _channels = [];
    private readonly FlushBatchingMetrics _metrics = new();
    private readonly ITestOutputHelper _output;

    public QueuedPipelineOnEventLoopsTests(ITestOutputHelper output) => _output = output;

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync()
    {
        await LoopGroupEnd.EndAsync(_group, _channels, _output);
        _certificate.Dispose();
        _metrics.Dispose();
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Payloads_written_from_four_threads_arrive_whole_each_threads_in_order_and_in_sends_of_many(bool tls)
    {
        using var recorder = new MeterRecorder(_metrics);
        var (client, server) = await Connect(ConnectionSettings.Default, tls);
        const int PerThread = 2_000;

        // Each payload: its thread, its number, then filler of a size that varies with both.
        var writers = Enumerable.Range(0, 4).Select(thread => Task.Run(async () =>
        {
            for (var i = 0; i < PerThread; i++)
            {
                var payload = new byte[8 + ((thread * 31) + i) % 300];
                BinaryPrimitives.WriteInt32LittleEndian(payload, thread);
                BinaryPrimitives.WriteInt32LittleEndian(payload.AsSpan(4), i);
                while (!client.Writer.TryWrite(payload))
                {
                    await Task.Yield();
                }
            }
        })).ToArray();
        await Poll.Within(Task.WhenAll(writers));

        await Poll.Until(() => server.Reader.Count == 4 * PerThread, "every payload at the server");
        var next = new int[4];
        foreach (var payload in server.Reader.Payloads)
        {
            var thread = BinaryPrimitives.ReadInt32LittleEndian(payload);
            var number = BinaryPrimitives.ReadInt32LittleEndian(payload.AsSpan(4));
            Assert.Equal(next[thread]++, number);
            Assert.Equal(8 + ((thread * 31) + number) % 300, payload.Length);
        }

        // Frames per send, the client's and the server's writers alike (the server writes nothing here): a burst of
        // thousands of writes goes out in sends of many frames, each drain flushed once.
        var frames = recorder.Sum("flushbatching.frames.sent");
        var sends = recorder.Values("flushbatching.frames_per_send").Count();
        Assert.Equal(4 * PerThread, frames);
        Assert.True(frames > 2 * sends, $"{frames} frames in {sends} sends");
    }

    [Fact]
    public async Task A_writer_faster_than_its_reader_is_refused_above_the_high_water_mark_and_taken_again_once_the_peer_reads()
    {
        var settings = ConnectionSettings.Default.WithWriteBufferWaterMarks(64 * 1024, 32 * 1024);
        var (client, server) = await Connect(settings, tls: false, serverReads: false, smallSocketBuffers: true);
        var payload = new byte[1000];

        var accepted = 0;
        await Poll.Until(() =>
        {
            for (var i = 0; i < 100; i++)
            {
                if (!client.Writer.TryWrite(payload))
                {
                    return true;
                }

                accepted++;
            }

            return false;
        }, "a refused write");

        // Refused once the bytes queued and in the outbound buffer passed the mark: the kernel's buffers hold the rest.
        Assert.InRange(client.Writer.UnsentBytes, 0, 64 * 1024 + 2 * 1004);
        Assert.Equal(64 * 1024, client.Writer.HighWaterMark);

        server.Channel.Configuration.AutoRead = true;
        server.Channel.Read();
        await Poll.Until(() => client.Writer.TryWrite(payload), "a write taken again");
        await Poll.Until(() => server.Reader.Count == accepted + 1, "every payload accepted at the server");
    }

    [Fact]
    public async Task A_close_sends_every_payload_queued_before_it_refuses_later_writes_and_closes_the_channel()
    {
        var (client, server) = await Connect(ConnectionSettings.Default, tls: false);

        for (var i = 0; i < 500; i++)
        {
            Assert.True(client.Writer.TryWrite(new byte[100]));
        }

        var closed = client.Writer.CloseAsync();
        Assert.False(client.Writer.TryWrite(new byte[100]));
        await Poll.Within(closed);
        await Poll.Within(server.Reader.Inactive.Task);
        Assert.Equal(500, server.Reader.Count);
        Assert.Null(client.Reader.Error);
    }

    [Fact]
    public async Task A_close_to_a_peer_that_reads_nothing_is_aborted_at_its_bound_and_the_pipeline_is_told_what_was_not_sent()
    {
        var settings = ConnectionSettings.Default.WithCloseTimeout(TimeSpan.FromMilliseconds(300));
        var (client, _) = await Connect(settings, tls: false, serverReads: false, smallSocketBuffers: true);

        // Written until the kernel's buffers on both ends are full too: refused, and still refused a while later.
        var refusedSince = DateTime.UtcNow;
        while (DateTime.UtcNow - refusedSince < TimeSpan.FromMilliseconds(200))
        {
            if (client.Writer.TryWrite(new byte[10_000]))
            {
                refusedSince = DateTime.UtcNow;
            }
            else
            {
                await Task.Delay(10);
            }
        }

        await Poll.Within(client.Writer.CloseAsync());

        var timeout = Assert.IsType<TimeoutException>(client.Reader.Error);
        Assert.Contains("bytes unsent", timeout.Message);

        // Dropped with the channel, once its end has gone through the pipeline.
        await Poll.Until(() => client.Writer.UnsentBytes == 0, "nothing left unsent");
        Assert.False(client.Writer.TryWrite(new byte[1]));
    }

    private async Task<(End Client, End Server)> Connect(ConnectionSettings settings, bool tls, bool serverReads = true, bool smallSocketBuffers = false)
    {
        var socketBuffer = smallSocketBuffers ? 16 * 1024 : 256 * 1024;
        var serverCertificate = X509CertificateLoader.LoadPkcs12FromFile(_certificate.PfxPath, SelfSignedCertificate.Password);
        settings = settings.WithMetrics(_metrics);
        var server = new TaskCompletionSource<End>(TaskCreationOptions.RunContinuationsAsynchronously);

        // Both bootstraps start on the thread pool: DotNetty's continue on the caller's context (docs/dotnetty.md).
        var bound = Task.Run(() => new ServerBootstrap()
            .Group(_group)
            .Channel<TcpServerSocketChannel>()
            .ChildOption(ChannelOption.AutoRead, serverReads)
            .ChildOption(ChannelOption.SoRcvbuf, socketBuffer)
            .ChildHandler(new ActionChannelInitializer<IChannel>(channel =>
            {
                var end = Build(channel, settings, tls ? TlsHandler.Server(serverCertificate) : null);
                channel.Pipeline.AddLast(new ActiveSignal(() => server.TrySetResult(end)));
            }))
            .BindAsync(new IPEndPoint(IPAddress.Loopback, 0)));
        var listening = await Poll.Within(bound, "the bind");
        _channels.Add(listening);
        End? client = null;
        var bootstrap = new Bootstrap()
            .Group(_group)
            .Channel<TcpSocketChannel>()
            .Option(ChannelOption.SoSndbuf, socketBuffer)
            .Handler(new ActionChannelInitializer<IChannel>(channel =>
                client = Build(channel, settings, tls ? new TlsHandler(stream => new SslStream(stream, true, (_, _, _, _) => true), new ClientTlsSettings("localhost")) : null)));
        var connected = await Poll.Within(Task.Run(() => bootstrap.ConnectAsync(listening.LocalAddress)), "the connect");
        _channels.Add(connected);
        var accepted = await Poll.Within(server.Task, "the server's channel");
        _channels.Add(accepted.Channel);
        if (tls)
        {
            await Poll.Until(() => client!.Reader.HandshakeDone && accepted.Reader.HandshakeDone, "the TLS handshakes");
        }

        return (client!, accepted);
    }

    // The guide's pipeline, as a user builds it.
    private static End Build(IChannel channel, ConnectionSettings settings, TlsHandler? tls)
    {
        var reader = new Collector();
        var writer = new QueuedChannelWriter(settings);
        if (tls is not null)
        {
            channel.Pipeline.AddLast("tls", tls);
        }

        channel.Pipeline.AddLast("decoder", new PayloadFrameDecoder(settings.Framing, settings.Metrics));
        channel.Pipeline.AddLast("batching", new BatchingWriterHandler(
            BatchingSettings.Default, BatchingWriterHandler.DefaultCombineBufferSize, settings.TimeProvider, settings.Metrics, settings.Framing)
        {
            ExplicitFlushEndsBurst = true,
        });
        channel.Pipeline.AddLast("writer", writer);
        channel.Pipeline.AddLast("app", reader);
        return new End(channel, writer, reader);
    }

    private sealed record End(IChannel Channel, QueuedChannelWriter Writer, Collector Reader);

    // The application's handler: keeps each payload, the handshake's end, and what the pipeline said went wrong.
    private sealed class Collector : ChannelHandlerAdapter
    {
        private readonly ConcurrentQueue<byte[]> _payloads = new();

        public IEnumerable<byte[]> Payloads => _payloads;

        public int Count => _payloads.Count;

        public TaskCompletionSource Inactive { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public bool HandshakeDone { get; private set; }

        public Exception? Error { get; private set; }

        public override void ChannelRead(IChannelHandlerContext context, object message) => _payloads.Enqueue((byte[])message);

        public override void UserEventTriggered(IChannelHandlerContext context, object evt) =>
            HandshakeDone |= evt is TlsHandshakeCompletionEvent { IsSuccessful: true };

        public override void ExceptionCaught(IChannelHandlerContext context, Exception exception) => Error ??= exception;

        public override void ChannelInactive(IChannelHandlerContext context) => Inactive.TrySetResult();
    }

    // Says when the accepted channel is active, so the test holds its end.
    private sealed class ActiveSignal(Action active) : ChannelHandlerAdapter
    {
        public override void ChannelActive(IChannelHandlerContext context)
        {
            active();
            context.FireChannelActive();
        }
    }
}
