using System.Net;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using DotNetty.Buffers;
using DotNetty.Codecs;
using DotNetty.Handlers.Tls;
using DotNetty.Transport.Bootstrapping;
using DotNetty.Transport.Channels;
using DotNetty.Transport.Channels.Embedded;
using DotNetty.Transport.Channels.Sockets;
using FlushBatching.Batching;
using FlushBatching.DotNetty.Tests.Support;
using FlushBatching.Framing;
using FlushBatching.Tests.Support;
using Microsoft.Extensions.Time.Testing;
using Xunit.Abstractions;

namespace FlushBatching.DotNetty.Tests;

/// <summary>
/// The handler in a user's own pipeline, placed as docs/dotnetty.md says (after TLS, before the length-field codecs),
/// over a real channel pair on loopback; and refused where it would break the user's framing.
/// </summary>
public sealed class BatchingWriterHandlerPlacementTests
{
    private const int Messages = 20_000;
    private readonly ITestOutputHelper _output;

    public BatchingWriterHandlerPlacementTests(ITestOutputHelper output) => _output = output;

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task In_a_pipeline_built_as_the_guide_says_every_message_arrives_as_its_own_frame_in_order_under_load(bool tls)
    {
        using var certificate = new SelfSignedCertificate();
        using var serverCertificate = X509CertificateLoader.LoadPkcs12FromFile(certificate.PfxPath, SelfSignedCertificate.Password);
        var group = new MultithreadEventLoopGroup(2);
        var received = new MessageNumberCollector();
        var channels = new List<IChannel?>();
        try
        {
            // Both bootstraps start on the thread pool: DotNetty's continue on the caller's context (docs/dotnetty.md).
            var server = await Poll.Within(Task.Run(() => new ServerBootstrap()
                .Group(group)
                .Channel<TcpServerSocketChannel>()
                .ChildHandler(new ActionChannelInitializer<IChannel>(channel =>
                {
                    received.Channel = channel;
                    AsTheGuideSays(channel.Pipeline, tls ? TlsHandler.Server(serverCertificate) : null, received);
                }))
                .BindAsync(new IPEndPoint(IPAddress.Loopback, 0))), "the bind");
            channels.Add(server);
            var client = await Poll.Within(Task.Run(() => new Bootstrap()
                .Group(group)
                .Channel<TcpSocketChannel>()
                .Handler(new ActionChannelInitializer<IChannel>(channel =>
                    AsTheGuideSays(channel.Pipeline, tls ? new TlsHandler(stream => new SslStream(stream, true, (_, _, _, _) => true), new ClientTlsSettings("localhost")) : null, new MessageNumberCollector())))
                .ConnectAsync(server.LocalAddress)), "the connect");
            channels.Add(client);

            // Bursts of writes from the channel's own event loop, each flushed once: what the handler combines.
            for (var first = 0; first < Messages; first += 500)
            {
                var start = first;
                await OnTheLoop.Run(client.EventLoop, () =>
                {
                    for (var i = start; i < start + 500; i++)
                    {
                        client.WriteAsync(Unpooled.WrappedBuffer([(byte)i, (byte)(i >> 8), (byte)(i >> 16)]));
                    }

                    client.Flush();
                });
            }

            await received.Count(Messages);
            Assert.Equal(Enumerable.Range(0, Messages), received.Values);
        }
        finally
        {
            channels.Add(received.Channel);
            await LoopGroupEnd.EndAsync(group, channels, _output);
        }
    }

    [Fact]
    public void Added_after_a_length_field_encoder_it_refuses_its_place_loudly_and_the_channel_goes_on_unbatched()
    {
        var channel = new EmbeddedChannel(new LengthFieldPrepender(2), new BatchingWriterHandler(BatchingSettings.Default));

        var refused = Assert.ThrowsAny<Exception>(() => channel.CheckException());
        Assert.Contains("nearer the application", refused.ToString());
        Assert.Null(channel.Pipeline.Get<BatchingWriterHandler>());

        // What the user writes is framed one message at a time, as without the handler.
        channel.WriteAndFlushAsync(Unpooled.WrappedBuffer([1, 2, 3]));
        var header = channel.ReadOutbound<IByteBuffer>();
        var body = channel.ReadOutbound<IByteBuffer>();
        Assert.Equal(3, header.GetShort(0));
        Assert.Equal(3, body.ReadableBytes);
        header.Release();
        body.Release();
        channel.FinishAndReleaseAll();
    }

    [Fact]
    public void Added_after_an_encoder_with_combining_off_it_batches_flushes_only_and_stays()
    {
        var probe = new FlushCountingProbe();
        var channel = new EmbeddedChannel(new LengthFieldPrepender(2), probe, new BatchingWriterHandler(BatchingSettings.Default, combineBufferSize: 0, timeProvider: new FakeTimeProvider()));

        channel.CheckException();
        Assert.NotNull(channel.Pipeline.Get<BatchingWriterHandler>());

        // Three writes each flushed by the writer become one flush at the burst's end, each message framed on its own.
        // (A clock that stands still: on the system clock, a stall past the 40 ms interval would flush early.)
        for (byte i = 1; i <= 3; i++)
        {
            channel.WriteAndFlushAsync(Unpooled.WrappedBuffer([i, i, i]));
        }

        Assert.Equal(0, probe.Flushes);
        channel.RunPendingTasks();
        Assert.Equal(1, probe.Flushes);
        for (byte i = 1; i <= 3; i++)
        {
            var header = channel.ReadOutbound<IByteBuffer>();
            var body = channel.ReadOutbound<IByteBuffer>();
            Assert.Equal(3, header.GetShort(0));
            Assert.Equal(i, body.GetByte(0));
            header.Release();
            body.Release();
        }

        Assert.False(channel.FinishAndReleaseAll());
    }

    [Theory]
    [InlineData("message-to-message encoder")]
    [InlineData("message-to-byte encoder")]
    [InlineData("message-to-message codec")]
    [InlineData("a subclass of an encoder")]
    public void Every_kind_of_DotNetty_encoder_nearer_the_socket_is_named_in_the_refusal(string kind)
    {
        var channel = new EmbeddedChannel();
        channel.Pipeline.AddLast("users-framer", Encoder(kind));
        channel.Pipeline.AddLast("batching", new BatchingWriterHandler(BatchingSettings.Default));

        var refused = Assert.ThrowsAny<Exception>(() => channel.CheckException()).ToString();
        Assert.Contains("after the encoder 'users-framer'", refused);
        Assert.Contains("the encoder would frame each batch as one message", refused);
        Assert.Contains("or pass combineBufferSize: 0", refused);
        Assert.Null(channel.Pipeline.Get<BatchingWriterHandler>());
        channel.FinishAndReleaseAll();
    }

    [Fact]
    public void Encoders_nearer_the_application_and_other_handlers_nearer_the_socket_leave_it_in_place()
    {
        // The encoder is in the pipeline before the handler is put nearer the socket than it.
        var channel = new EmbeddedChannel();
        channel.Pipeline.AddLast("frame-encoder", new LengthFieldPrepender(2));
        channel.Pipeline.AddFirst("inspector", new ChannelHandlerAdapter());
        channel.Pipeline.AddAfter("inspector", "batching", new BatchingWriterHandler(BatchingSettings.Default));

        channel.CheckException();
        Assert.NotNull(channel.Pipeline.Get<BatchingWriterHandler>());
        channel.FinishAndReleaseAll();
    }

    [Fact]
    public void Framing_its_own_payloads_it_combines_after_an_encoder_without_refusing()
    {
        var channel = new EmbeddedChannel(new LengthFieldPrepender(2), new BatchingWriterHandler(BatchingSettings.Default, framing: FramingSettings.Default));

        channel.CheckException();
        Assert.NotNull(channel.Pipeline.Get<BatchingWriterHandler>());
        channel.FinishAndReleaseAll();
    }

    private static IChannelHandler Encoder(string kind) => kind switch
    {
        "message-to-message encoder" => new LengthFieldPrepender(2),
        "message-to-byte encoder" => new CopyingEncoder(),
        "message-to-message codec" => new PassingCodec(),
        "a subclass of an encoder" => new SubclassedPrepender(),
        _ => throw new ArgumentOutOfRangeException(nameof(kind), kind, null),
    };

    // The order of docs/dotnetty.md: TLS first, then the handler, then the codecs, then the application.
    private static void AsTheGuideSays(IChannelPipeline pipeline, TlsHandler? tls, MessageNumberCollector app)
    {
        if (tls is not null)
        {
            pipeline.AddLast("tls", tls);
        }

        pipeline.AddLast("batching", new BatchingWriterHandler(BatchingSettings.Default));
        pipeline.AddLast("frame-decoder", new LengthFieldBasedFrameDecoder(ushort.MaxValue, 0, 2, 0, 2));
        pipeline.AddLast("frame-encoder", new LengthFieldPrepender(2));
        pipeline.AddLast("app", app);
    }

    private sealed class CopyingEncoder : MessageToByteEncoder<IByteBuffer>
    {
        protected override void Encode(IChannelHandlerContext context, IByteBuffer message, IByteBuffer output) => output.WriteBytes(message);
    }

    private sealed class PassingCodec : MessageToMessageCodec<IByteBuffer, IByteBuffer>
    {
        protected override void Encode(IChannelHandlerContext ctx, IByteBuffer msg, List<object> output) => output.Add(msg.Retain());

        protected override void Decode(IChannelHandlerContext ctx, IByteBuffer msg, List<object> output) => output.Add(msg.Retain());
    }

    private sealed class SubclassedPrepender() : LengthFieldPrepender(2);
}
