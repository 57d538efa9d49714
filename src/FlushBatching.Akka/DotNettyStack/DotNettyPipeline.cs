using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using DotNetty.Handlers.Tls;
using DotNetty.Transport.Channels;
using FlushBatching.DotNetty;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Io;
using FlushBatching.Tcp.Tls;
using TlsSettings = FlushBatching.Tcp.TlsSettings;

namespace FlushBatching.Akka.DotNettyStack;

/// <summary>
/// The one place a DotNetty channel is made into a connection: its options (the core's <see cref="SocketOptions"/> and
/// DotNetty's own), and its pipeline, FlushBatching.DotNetty's public parts as a user would put them together:
/// <c>[tls] → PayloadFrameDecoder → BatchingWriterHandler (which writes the length prefixes) → QueuedChannelWriter →
/// the read gate</c>, with the handshake mapped from the core's <see cref="TlsHandshake"/>.
/// </summary>
internal static class DotNettyPipeline
{
    // targetHost is given for an outbound channel, null for an accepted one.
    public static DotNettyConnection Build(IChannel channel, ConnectionSettings settings, string? targetHost)
    {
        var judge = settings.Tls is { } tls ? new PeerJudge(tls) : null;
        var connection = new DotNettyConnection(channel, settings, judge);
        var pipeline = channel.Pipeline;
        if (settings.Tls is { } configured)
        {
            pipeline.AddLast("tls", targetHost is null ? ServerTls(configured, channel, judge!) : ClientTls(configured, channel, judge!, targetHost));
        }

        pipeline.AddLast("payload-decoder", new PayloadFrameDecoder(settings.Framing, settings.Metrics));
        // The writer's drain flushes once after the payloads it takes: that flush ends the burst.
        pipeline.AddLast("batching", new BatchingWriterHandler(
            settings.Batching, BatchingWriterHandler.DefaultCombineBufferSize, settings.TimeProvider, settings.Metrics, settings.Framing)
        {
            ExplicitFlushEndsBurst = true,
        });
        pipeline.AddLast("writer", connection.Writer);
        pipeline.AddLast("connection", connection.Gate);
        return connection;
    }

    // The core's SocketOptions, and DotNetty's own, on either bootstrap: DotNetty's client and server bootstraps share
    // no interface for them.
    public static void ApplyChannelOptions(ConnectionSettings settings, Action<ChannelOption<bool>, bool> setFlag, Action<ChannelOption<int>, int> setNumber)
    {
        var socket = SocketOptions.Of(settings);
        setFlag(ChannelOption.TcpNodelay, socket.NoDelay);
        setFlag(ChannelOption.SoKeepalive, socket.KeepAlive);
        if (socket.SendBufferSize is { } send)
        {
            setNumber(ChannelOption.SoSndbuf, send);
        }

        if (socket.ReceiveBufferSize is { } receive)
        {
            setNumber(ChannelOption.SoRcvbuf, receive);
        }

        // Reads start once Akka has registered a read handler. The water marks are the QueuedChannelWriter's, set as it
        // joins the pipeline.
        setFlag(ChannelOption.AutoRead, false);
    }

    // The handshake as the core's sockets do it: the core's TlsHandshake options, mapped to DotNetty's TLS handler.
    private static TlsHandler ServerTls(TlsSettings tls, IChannel channel, PeerJudge judge)
    {
        var options = TlsHandshake.ServerOptions(tls, judge, () => Peer(channel));
        return new TlsHandler(
            stream => new SslStream(stream, true, options.RemoteCertificateValidationCallback),
            new ServerTlsSettings((X509Certificate2)options.ServerCertificate!, options.ClientCertificateRequired, ChecksRevocation(options.CertificateRevocationCheckMode), options.EnabledSslProtocols));
    }

    private static TlsHandler ClientTls(TlsSettings tls, IChannel channel, PeerJudge judge, string connectedHost)
    {
        var options = TlsHandshake.ClientOptions(tls, judge, () => Peer(channel), connectedHost);
        return new TlsHandler(
            stream => new SslStream(stream, true, options.RemoteCertificateValidationCallback, options.LocalCertificateSelectionCallback),
            new ClientTlsSettings(
                options.EnabledSslProtocols, ChecksRevocation(options.CertificateRevocationCheckMode),
                options.ClientCertificates?.Cast<X509Certificate>().ToList() ?? [], options.TargetHost));
    }

    private static bool ChecksRevocation(X509RevocationMode mode) => mode != X509RevocationMode.NoCheck;

    private static string Peer(IChannel channel) => PeerEndPoints.Describe(channel.RemoteAddress);
}
