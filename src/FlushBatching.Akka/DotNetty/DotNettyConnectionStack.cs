using System.Net;
using System.Net.Sockets;
using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using DotNetty.Handlers.Tls;
using DotNetty.Transport.Bootstrapping;
using DotNetty.Transport.Channels;
using DotNetty.Transport.Channels.Sockets;
using FlushBatching.DotNetty;
using FlushBatching.Tcp;
using TlsSettings = FlushBatching.Tcp.TlsSettings;

namespace FlushBatching.Akka;

/// <summary>
/// DotNetty as an <see cref="IConnectionStack"/>. Every channel gets one pipeline, built here:
/// <c>[tls] → payload decoder → BatchingWriterHandler (which writes the length prefixes) → connection</c>. Accepted
/// channels run on a group sized by <c>server-socket-worker-pool</c>, outbound ones on a group sized by
/// <c>client-socket-worker-pool</c>, as stock's.
/// </summary>
internal sealed class DotNettyConnectionStack : IConnectionStack
{
    // How long each step of stopping waits on an event loop: the server channel closing itself once its socket is
    // closed (one turn of its loop), channels closing, the loops terminating. Under the transport's own bound.
    private static readonly TimeSpan StepBound = TimeSpan.FromSeconds(1);

    private readonly ConnectionSettings _settings;
    private readonly MultithreadEventLoopGroup _serverGroup;
    private readonly MultithreadEventLoopGroup _clientGroup;
    private readonly OpenSet<IChannel> _channels = new();
    private Socket? _listening;
    private IChannel? _server;

    public DotNettyConnectionStack(ConnectionSettings settings, int serverEventLoops, int clientEventLoops)
    {
        _settings = settings;
        _serverGroup = new MultithreadEventLoopGroup(serverEventLoops);
        _clientGroup = new MultithreadEventLoopGroup(clientEventLoops);
    }

    public string Name => "DotNetty";

    /// <summary>The event loops of accepted channels, and of outbound ones.</summary>
    internal (int Server, int Client) EventLoops => (_serverGroup.Items.Count(), _clientGroup.Items.Count());

    public async Task<IPEndPoint> ListenAsync(IPEndPoint endpoint, Action<ITransportConnection> onInbound, Action<Exception> onRejected)
    {
        // Our own listening socket, so that StopListeningAsync can close it under the channel: see there.
        var listening = new Socket(SocketType.Stream, ProtocolType.Tcp);
        _listening = listening;
        var bootstrap = new ServerBootstrap()
            .Group(_serverGroup)
            .ChannelFactory(() => new TcpServerSocketChannel(listening))
            .Option(ChannelOption.SoBacklog, _settings.Backlog)
            .ChildHandler(new ActionChannelInitializer<IChannel>(channel =>
            {
                if (KeepOrClose(channel))
                {
                    _ = AnnounceWhenReadyAsync(Build(channel, _settings, targetHost: null), _settings.ConnectTimeout, onInbound, onRejected);
                }
            }));
        ApplyChannelOptions(_settings, (option, value) => bootstrap.ChildOption(option, value), (option, value) => bootstrap.ChildOption(option, value));
        _server = await bootstrap.BindAsync(endpoint).ConfigureAwait(false);
        return DotNettyConnection.Unmapped(_server.LocalAddress);
    }

    public async Task<ITransportConnection> ConnectAsync(IPEndPoint endpoint, ConnectionSettings settings)
    {
        DotNettyConnection? connection = null;
        var bootstrap = new Bootstrap()
            .Group(_clientGroup)
            .Channel<TcpSocketChannel>()
            // DotNetty's own connect timeout a second past the bound below, so that the bound (one for connecting and
            // the handshake together) is the one that fires; DotNetty's is only a backstop.
            .Option(ChannelOption.ConnectTimeout, settings.ConnectTimeout + TimeSpan.FromSeconds(1))
            .Handler(new ActionChannelInitializer<IChannel>(channel =>
            {
                connection = Build(channel, settings, targetHost: endpoint.Address.ToString());
                KeepOrClose(channel);
            }));
        ApplyChannelOptions(settings, (option, value) => bootstrap.Option(option, value), (option, value) => bootstrap.Option(option, value));

        // One bound for connecting and the handshake together, as the core's connector has. Past it, or on any failure,
        // the channel is closed: a handshake that succeeded after the bound must not leave a connection nobody owns.
        async Task<ITransportConnection> ConnectAndHandshakeAsync()
        {
            await bootstrap.ConnectAsync(endpoint).ConfigureAwait(false);
            await connection!.Ready.ConfigureAwait(false);
            return connection;
        }

        var connecting = ConnectAndHandshakeAsync();
        try
        {
            return await connecting.WaitAsync(settings.ConnectTimeout).ConfigureAwait(false);
        }
        // The bound above; DotNetty's own (ConnectTimeoutException) only if this machine stalled past both.
        catch (Exception e) when (e is TimeoutException or ConnectTimeoutException)
        {
            connection?.Abort();
            // What ends after the bound is this method's alone: a late success is closed, a late failure observed.
            _ = connecting.ContinueWith(
                static late =>
                {
                    if (late.IsCompletedSuccessfully)
                    {
                        late.Result.Abort();
                    }
                    else
                    {
                        _ = late.Exception;
                    }
                },
                CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
            throw SetupTimeouts.Connecting(endpoint, settings.ConnectTimeout, e);
        }
        catch (Exception e) when (Refusal(e) is { } refused)
        {
            // DotNetty's TlsHandler fails the channel with its error wrapped: the same refusal as the core's connector.
            connection?.Abort();
            throw new AuthenticationException($"The TLS handshake with {endpoint} failed: {refused.Message}", refused);
        }
        catch
        {
            connection?.Abort();
            throw;
        }
    }

    /// <summary>
    /// Stops accepting, and hands on a connection accepted at that moment rather than leave it open. DotNetty's server
    /// channel, when closed, drops an accept that completed but that its event loop had not taken yet: the socket stays
    /// open and no one owns it, so its peer waits forever. Closing the listening socket instead lets the channel take
    /// such an accept (the next one fails), then close itself.
    /// </summary>
    public async Task StopListeningAsync()
    {
        if (Interlocked.Exchange(ref _server, null) is { } server)
        {
            _listening!.Dispose();
            await Task.WhenAny(server.CloseCompletion, Task.Delay(StepBound)).ConfigureAwait(false);
            await server.CloseAsync().ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Closes every channel still open, then stops the event loops. A channel whose event loop stopped first would
    /// never close its socket: one accepted while the transport shut down, say, which no one had announced yet. Each
    /// step is bounded by <see cref="StepBound"/>: a loop too busy to close its channels in time is stopped anyway.
    /// </summary>
    public async Task StopAsync()
    {
        var closing = Task.WhenAll(_channels.Close().Select(CloseQuietlyAsync));
        await Task.WhenAny(closing, Task.Delay(StepBound)).ConfigureAwait(false);
        await Task.WhenAll(
            _serverGroup.ShutdownGracefullyAsync(TimeSpan.Zero, StepBound),
            _clientGroup.ShutdownGracefullyAsync(TimeSpan.Zero, StepBound)).ConfigureAwait(false);
    }

    public string StillOpen
    {
        get
        {
            var open = _channels.Snapshot().Where(channel => channel.Open).Select(channel => $"channel {channel.LocalAddress} -> {channel.RemoteAddress}");
            var loops = new[] { ("server", _serverGroup), ("client", _clientGroup) }
                .Where(group => !group.Item2.TerminationCompletion.IsCompleted)
                .Select(group => $"{group.Item1} event loops not terminated");
            return string.Join(", ", open.Concat(loops));
        }
    }

    private static async Task CloseQuietlyAsync(IChannel channel)
    {
        try
        {
            await channel.CloseAsync().ConfigureAwait(false);
        }
        catch (Exception)
        {
            // A close that fails leaves the channel to the event loop's shutdown, which follows: shutdown goes on.
        }
    }

    // Holds a new channel until it closes, so that StopAsync closes it; once stopping, closes it at once instead.
    private bool KeepOrClose(IChannel channel)
    {
        if (_channels.TryAdd(channel, channel.CloseCompletion))
        {
            return true;
        }

        channel.CloseAsync();
        return false;
    }

    // An accepted channel is announced once its TLS handshake is done; one that has not finished it within
    // connection-timeout (a peer that never speaks, or stops halfway) is closed, as the core's listener closes it.
    private static async Task AnnounceWhenReadyAsync(DotNettyConnection connection, TimeSpan bound, Action<ITransportConnection> onInbound, Action<Exception> onRejected)
    {
        try
        {
            await connection.Ready.WaitAsync(bound).ConfigureAwait(false);
            onInbound(connection);
        }
        catch (Exception e)
        {
            connection.Abort();
            onRejected(e is TimeoutException
                ? SetupTimeouts.Handshake(connection.ToString(), bound, e)
                : new IOException($"The connection {connection} was dropped while setting up: {e.Message}", e));
        }
    }

    // The one place a channel's pipeline is built; targetHost is given for an outbound channel, null for an accepted one.
    private static DotNettyConnection Build(IChannel channel, ConnectionSettings settings, string? targetHost)
    {
        var judge = settings.Tls is { } tls ? new PeerJudge(tls) : null;
        var batching = new BatchingWriterHandler(
            settings.Batching, BatchingWriterHandler.DefaultCombineBufferSize, settings.TimeProvider, settings.Metrics, settings.Framing);
        var connection = new DotNettyConnection(channel, settings, judge, batching);
        var pipeline = channel.Pipeline;
        if (settings.Tls is { } configured)
        {
            pipeline.AddLast("tls", targetHost is null ? ServerTls(configured, channel, judge!) : ClientTls(configured, channel, judge!, targetHost));
        }

        pipeline.AddLast("payload-decoder", new DotNettyPayloadDecoder(settings.Framing, settings.Metrics));
        pipeline.AddLast("batching", batching);
        pipeline.AddLast("connection", connection.Tail);
        return connection;
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

    // The handshake's own refusal, however deep DotNetty wrapped it.
    private static AuthenticationException? Refusal(Exception? e)
    {
        for (; e is not null; e = e.InnerException)
        {
            if (e is AuthenticationException refused)
            {
                return refused;
            }
        }

        return null;
    }

    private static string Peer(IChannel channel) => channel.RemoteAddress?.ToString() ?? "the peer";

    // The core's SocketOptions, and DotNetty's own, on either bootstrap: DotNetty's client and server bootstraps share
    // no interface for them.
    private static void ApplyChannelOptions(ConnectionSettings settings, Action<ChannelOption<bool>, bool> setFlag, Action<ChannelOption<int>, int> setNumber)
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

        setFlag(ChannelOption.AutoRead, false); // reads start once Akka has registered a read handler
        // Both at most ConnectionSettings.MaxWriteBufferWaterMark (int.MaxValue): checked when the settings were made.
        setNumber(ChannelOption.WriteBufferHighWaterMark, checked((int)settings.WriteBufferHighWaterMark));
        setNumber(ChannelOption.WriteBufferLowWaterMark, checked((int)settings.WriteBufferLowWaterMark));
    }
}
