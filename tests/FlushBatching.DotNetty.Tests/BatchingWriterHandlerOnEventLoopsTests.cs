using System.Net;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using DotNetty.Buffers;
using DotNetty.Codecs;
using DotNetty.Handlers.Tls;
using DotNetty.Transport.Bootstrapping;
using DotNetty.Transport.Channels;
using DotNetty.Transport.Channels.Sockets;
using FlushBatching.Batching;
using FlushBatching.DotNetty.Tests.Support;
using FlushBatching.Tests.Support;
using Microsoft.Extensions.Time.Testing;
using Xunit.Abstractions;

namespace FlushBatching.DotNetty.Tests;

/// <summary>
/// The handler where a DotNetty user runs it: in their own pipeline, built as docs/dotnetty.md says, on DotNetty's own
/// <see cref="MultithreadEventLoopGroup"/>, over real sockets on loopback, with a probe nearer the socket counting the
/// flushes that reach it. Each trigger the EmbeddedChannel tests count is seen here once more on a real loop.
/// </summary>
public sealed class BatchingWriterHandlerOnEventLoopsTests : IAsyncLifetime
{
    // Only the trigger a test is about may fire: an hour is longer than any test, 65536 writes more than any writes.
    private static readonly BatchingSettings Quiet = BatchingSettings.Default
        .WithMaxPendingWrites(65536).WithMaxPendingBytes(64 * 1024 * 1024).WithFlushInterval(TimeSpan.FromHours(1));

    private readonly MultithreadEventLoopGroup _group = new(2);
    private readonly SelfSignedCertificate _certificate = new();
    private readonly List<IChannel?> _channels = [];
    private readonly ITestOutputHelper _output;

    public BatchingWriterHandlerOnEventLoopsTests(ITestOutputHelper output) => _output = output;

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync()
    {
        await LoopGroupEnd.EndAsync(_group, _channels, _output);
        _certificate.Dispose();
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_burst_written_without_a_flush_goes_out_framed_in_order_at_its_end_in_flushes_of_max_pending_writes(bool tls)
    {
        var (client, probe, received) = await Connect(BatchingSettings.Default.WithMaxPendingWrites(30).WithFlushInterval(TimeSpan.FromHours(1)), tls);

        // 100 messages in one task, none flushed by the writer. The length-field encoder nearer the application writes
        // each as two buffers (prefix, body), so the handler sees 200 writes: six flushes at 30, 60, ... 180, the last
        // twenty at the burst's end. Without the burst end they would wait an hour.
        var flushesInTheTask = await Run(client, () =>
        {
            for (var i = 0; i < 100; i++)
            {
                client.WriteAsync(Message(i));
            }

            return probe.Flushes;
        });

        await received.Count(100);
        Assert.Equal(Enumerable.Range(0, 100), received.Values);
        Assert.Equal(6, flushesInTheTask);
        Assert.Equal(7, probe.Flushes);
    }

    [Fact]
    public async Task A_burst_that_goes_on_past_the_flush_interval_is_flushed_at_the_interval_not_at_its_end()
    {
        var clock = new FakeTimeProvider();
        var (client, probe, received) = await Connect(Quiet.WithFlushInterval(TimeSpan.FromMilliseconds(40)), tls: false, clock);

        // The burst cannot end while this task runs; the clock passes the interval between writes.
        var flushes = await Run(client, () =>
        {
            for (var i = 0; i < 5; i++)
            {
                client.WriteAsync(Message(i));
            }

            var before = probe.Flushes;
            clock.Advance(TimeSpan.FromMilliseconds(50));
            client.WriteAsync(Message(5));
            return (before, after: probe.Flushes);
        });

        await received.Count(6);
        Assert.Equal((0, 1), flushes);
        Assert.Equal(Enumerable.Range(0, 6), received.Values);
    }

    [Fact]
    public async Task What_is_pending_when_the_channel_turns_unwritable_is_flushed_and_arrives_once_the_peer_reads()
    {
        var (client, probe, received) = await Connect(Quiet, tls: false, serverReads: false, clientHighWaterMark: 64 * 1024);
        var payload = new byte[1000];

        // Writes until the channel says it is unwritable, with no trigger but that one: what is pending must go to the
        // socket, or the channel would stay unwritable with nothing on its way. Each flush there lets the kernel's
        // buffers take some, so the channel turns unwritable for good only once they are full too.
        var (written, flushes) = await Run(client, () =>
        {
            var count = 0;
            while (client.IsWritable)
            {
                client.WriteAsync(Unpooled.WrappedBuffer(payload));
                count++;
            }

            return (count, probe.Flushes);
        });

        Assert.True(flushes >= 1, $"no flush in {written} writes until the channel turned unwritable");
        received.Channel!.Configuration.AutoRead = true;

        // The write that turned the channel unwritable was found left behind once: combined after the drain its
        // combine buffer's write set off, unflushed, waiting for a next write that never came.
        await received.Count(written);
        await Poll.Until(() => client.IsWritable, "the client to turn writable once the peer read everything");
    }

    [Fact]
    public async Task Writes_pending_when_the_channel_is_closed_are_flushed_before_the_close()
    {
        var (client, _, received) = await Connect(Quiet, tls: false);

        await Run(client, () =>
        {
            for (var i = 0; i < 10; i++)
            {
                client.WriteAsync(Message(i));
            }

            client.CloseAsync();
            return 0;
        });

        await Poll.Within(received.Inactive.Task, "the server's channel to go inactive");
        Assert.Equal(Enumerable.Range(0, 10), received.Values);
    }

    private static IByteBuffer Message(int i) => Unpooled.WrappedBuffer([(byte)i, (byte)(i >> 8), (byte)(i >> 16)]);

    private static Task<T> Run<T>(IChannel channel, Func<T> action) => OnTheLoop.Run(channel.EventLoop, action);

    // A server and a client on the group's loops, each pipeline in the guide's order: [TLS], the handler, the frame
    // codecs, the application; the client's with the probe between TLS and the handler.
    private async Task<(IChannel Client, FlushCountingProbe Probe, MessageNumberCollector Received)> Connect(
        BatchingSettings settings, bool tls, TimeProvider? clock = null, bool serverReads = true, int? clientHighWaterMark = null)
    {
        var serverCertificate = X509CertificateLoader.LoadPkcs12FromFile(_certificate.PfxPath, SelfSignedCertificate.Password);
        var received = new MessageNumberCollector();
        var probe = new FlushCountingProbe();
        // Both bootstraps start on the thread pool: DotNetty's continue on the caller's context (docs/dotnetty.md).
        var bound = Task.Run(() => new ServerBootstrap()
            .Group(_group)
            .Channel<TcpServerSocketChannel>()
            .ChildOption(ChannelOption.AutoRead, serverReads)
            .ChildHandler(new ActionChannelInitializer<IChannel>(channel =>
            {
                received.Channel = channel;
                if (tls)
                {
                    channel.Pipeline.AddLast("tls", TlsHandler.Server(serverCertificate));
                }

                channel.Pipeline.AddLast("frame-decoder", new LengthFieldBasedFrameDecoder(ushort.MaxValue, 0, 2, 0, 2));
                channel.Pipeline.AddLast("app", received);
            }))
            .BindAsync(new IPEndPoint(IPAddress.Loopback, 0)));
        var server = await Poll.Within(bound, "the bind");
        _channels.Add(server);
        var bootstrap = new Bootstrap()
            .Group(_group)
            .Channel<TcpSocketChannel>()
            .Handler(new ActionChannelInitializer<IChannel>(channel =>
            {
                if (tls)
                {
                    channel.Pipeline.AddLast("tls", new TlsHandler(stream => new SslStream(stream, true, (_, _, _, _) => true), new ClientTlsSettings("localhost")));
                }

                channel.Pipeline.AddLast("probe", probe);
                channel.Pipeline.AddLast("batching", new BatchingWriterHandler(settings, timeProvider: clock));
                channel.Pipeline.AddLast("frame-encoder", new LengthFieldPrepender(2));
            }));
        if (clientHighWaterMark is { } high)
        {
            bootstrap.Option(ChannelOption.WriteBufferHighWaterMark, high).Option(ChannelOption.WriteBufferLowWaterMark, high / 2)
                .Option(ChannelOption.SoSndbuf, 16 * 1024);
        }

        var client = await Poll.Within(Task.Run(() => bootstrap.ConnectAsync(server.LocalAddress)), "the connect");
        _channels.Add(client);

        // With TLS, the handshake's own flushes come first: one message through it, then the tests count from a quiet
        // channel.
        await Poll.Until(() => received.Channel is { Active: true }, "the server's channel");
        _channels.Add(received.Channel);
        if (tls)
        {
            await Run(client, () => client.WriteAndFlushAsync(Message(0)));
            await received.Count(1);
            await Run(client, () => { probe.Reset(); return 0; });
            received.Clear();
        }

        return (client, probe, received);
    }
}
