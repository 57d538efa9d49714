using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using Akka.Actor;
using Akka.Configuration;
using Akka.Event;
using Akka.Remote;
using Akka.Remote.Transport;
using Akka.Remote.Transport.DotNetty;
using DotNetty.Handlers.Tls;
using DotNetty.Transport.Bootstrapping;
using DotNetty.Transport.Channels;
using DotNetty.Transport.Channels.Sockets;
using FlushBatching.DotNetty;

namespace FlushBatching.Akka;

/// <summary>
/// An Akka.Remote transport on DotNetty's I/O: the stock pipeline's shape (TLS, a length-field frame decoder) with
/// <see cref="BatchingWriterHandler"/> where stock has its flush-consolidation handler, configured by the same
/// section and <c>batching { }</c> block as <see cref="BatchingTcpTransport"/>. Its frame decoder and its frame
/// buffers are its own, because DotNetty's cost more per message than the batching saves.
/// </summary>
/// <remarks>
/// <para>Enable it with <c>akka.remote.dot-netty.tcp.transport-class = "FlushBatching.Akka.DotNettyBatchingTransport, FlushBatching.Akka"</c>.</para>
/// <para>
/// Pick it to keep Akka.Remote's I/O on DotNetty while gaining every batching key, or to tell how much of
/// <see cref="BatchingTcpTransport"/>'s gain comes from batching and how much from the core's I/O. Each write puts
/// Akka's payload on a queue; one drain per idle-to-busy change frames what is queued (prefix and payload in one
/// buffer, reused from the channel's frame pool) and writes it on the channel's event loop, with no event-loop task
/// per message. Sends and receives run on one group of two event loops per transport.
/// </para>
/// </remarks>
public sealed class DotNettyBatchingTransport : Transport
{
    private const int EventLoops = 2;

    private readonly TaskCompletionSource<IAssociationEventListener> _associationListener =
        new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly OpenConnections<IChannel> _channels = new();
    private readonly MultithreadEventLoopGroup _group = new(EventLoops);
    private IChannel? _server;
    private Task<bool>? _shutdown;
    private volatile bool _shutDown;

    /// <summary>Created by Akka.Remote through reflection, with the transport's own config section.</summary>
    /// <param name="system">The actor system the transport serves.</param>
    /// <param name="config">The transport's section, such as <c>akka.remote.dot-netty.tcp</c>.</param>
    /// <exception cref="InvalidSettingException">A key has a bad value; the message names the key, the value and what is allowed.</exception>
    public DotNettyBatchingTransport(ActorSystem system, Config config)
    {
        System = system ?? throw new ArgumentNullException(nameof(system));
        Config = config;
        Settings = BatchingTransportSettings.Create(system, config);
        Log = Logging.GetLogger(system, GetType());
        SchemeIdentifier = Settings.SchemeIdentifier;
    }

    /// <summary><c>tcp</c>, or <c>ssl.tcp</c> with TLS.</summary>
    public override string SchemeIdentifier { get; protected set; }

    /// <inheritdoc cref="BatchingTcpTransport.MaximumPayloadBytes"/>
    public override long MaximumPayloadBytes => Settings.Connection.Framing.MaximumPayloadSize;

    internal BatchingTransportSettings Settings { get; }

    internal ILoggingAdapter Log { get; }

    /// <inheritdoc />
    public override bool IsResponsibleFor(Address remote) => true;

    /// <inheritdoc />
    public override async Task<(Address, TaskCompletionSource<IAssociationEventListener>)> Listen()
    {
        var endpoint = await Settings.ResolveAsync(Settings.Hostname, Settings.Port).ConfigureAwait(false);
        var bootstrap = new ServerBootstrap()
            .Group(_group)
            .Channel<TcpServerSocketChannel>()
            .Option(ChannelOption.SoBacklog, Settings.Connection.Backlog)
            .ChildHandler(new ActionChannelInitializer<IChannel>(channel => Initialize(channel, remote: null)));
        ApplySocketOptions(bootstrap);
        try
        {
            _server = await bootstrap.BindAsync(endpoint).ConfigureAwait(false);
        }
        catch (Exception e) when (e is SocketException or AggregateException)
        {
            throw new RemoteTransportException($"Failed to bind to [{endpoint}]: {e.Message}", e);
        }

        var bound = (IPEndPoint)_server.LocalAddress;
        var address = Settings.ListenAddress(SchemeIdentifier, System.Name, bound);
        Log.Info("FlushBatching transport listening on akka.{0} ({1}, DotNetty); {2}", address, bound, Settings);
        return (address, _associationListener);
    }

    /// <inheritdoc />
    /// <exception cref="InvalidAssociationException">The peer refused, did not answer within <c>connection-timeout</c>, or failed the TLS handshake.</exception>
    public override async Task<AssociationHandle> Associate(Address remoteAddress)
    {
        ArgumentNullException.ThrowIfNull(remoteAddress);
        if (_shutDown || _server is null)
        {
            throw new InvalidAssociationException($"Cannot associate with {remoteAddress}: the transport is {(_shutDown ? "shut down" : "not listening")}.");
        }

        try
        {
            var endpoint = await Settings.ConnectableEndPointAsync(remoteAddress).ConfigureAwait(false);
            var bootstrap = new Bootstrap()
                .Group(_group)
                .Channel<TcpSocketChannel>()
                .Option(ChannelOption.ConnectTimeout, Settings.Connection.ConnectTimeout)
                .Handler(new ActionChannelInitializer<IChannel>(channel => Initialize(channel, remoteAddress)));
            ApplySocketOptions(bootstrap);
            var channel = await bootstrap.ConnectAsync(endpoint).WaitAsync(Settings.Connection.ConnectTimeout).ConfigureAwait(false);
            var handler = channel.Pipeline.Get<DotNettyAssociationHandler>();
            return await handler.Ready.WaitAsync(Settings.Connection.ConnectTimeout).ConfigureAwait(false);
        }
        catch (Exception e) when (e is not InvalidAssociationException)
        {
            var cause = e is AggregateException { InnerException: { } inner } ? inner : e;
            throw new InvalidAssociationException($"Failed to associate with {remoteAddress}: {cause.Message}", cause);
        }
    }

    /// <summary>Stops listening, closes every channel after what it has queued is sent, and stops the event loops.</summary>
    /// <remarks>Safe to call more than once: later calls return the first call's task.</remarks>
    public override Task<bool> Shutdown()
    {
        lock (_group)
        {
            return _shutdown ??= ShutdownOnceAsync();
        }
    }

    private async Task<bool> ShutdownOnceAsync()
    {
        _shutDown = true;
        if (_server is { } server)
        {
            await server.CloseAsync().ConfigureAwait(false);
        }

        await _channels.CloseAll(channel => channel.CloseAsync()).ConfigureAwait(false);
        await _group.ShutdownGracefullyAsync(TimeSpan.Zero, TimeSpan.FromSeconds(2)).ConfigureAwait(false);
        return true;
    }

    private void ApplySocketOptions(ServerBootstrap server) =>
        ApplySocketOptions((option, value) => server.ChildOption(option, value), (option, value) => server.ChildOption(option, value));

    private void ApplySocketOptions(Bootstrap client) =>
        ApplySocketOptions((option, value) => client.Option(option, value), (option, value) => client.Option(option, value));

    // The same options on either bootstrap: DotNetty's client and server bootstraps share no interface for them.
    private void ApplySocketOptions(Action<ChannelOption<bool>, bool> setFlag, Action<ChannelOption<int>, int> setNumber)
    {
        var connection = Settings.Connection;
        setFlag(ChannelOption.TcpNodelay, connection.NoDelay);
        setFlag(ChannelOption.SoKeepalive, connection.KeepAlive);
        setFlag(ChannelOption.AutoRead, false); // reads start once Akka has registered a read handler
        setNumber(ChannelOption.WriteBufferHighWaterMark, (int)connection.WriteBufferHighWaterMark);
        setNumber(ChannelOption.WriteBufferLowWaterMark, (int)connection.WriteBufferLowWaterMark);
        if (connection.SendBufferSize > 0)
        {
            setNumber(ChannelOption.SoSndbuf, connection.SendBufferSize);
        }

        if (connection.ReceiveBufferSize > 0)
        {
            setNumber(ChannelOption.SoRcvbuf, connection.ReceiveBufferSize);
        }
    }

    private void Initialize(IChannel channel, Address? remote)
    {
        var connection = Settings.Connection;
        var pipeline = channel.Pipeline;
        if (connection.Tls is { } tls)
        {
            pipeline.AddLast("tls", TlsHandlerFor(tls, channel, remote));
        }

        pipeline.AddLast("frame-decoder", new DotNettyPayloadDecoder(connection.Framing));
        pipeline.AddLast("batching", new BatchingWriterHandler(connection.Batching, connection.TimeProvider, connection.Metrics));
        var handler = new DotNettyAssociationHandler(this, remote, connection.Tls is not null);
        pipeline.AddLast("association", handler);

        _channels.Add(channel, channel.CloseCompletion);
        if (_shutDown)
        {
            channel.CloseAsync();
        }
        else if (remote is null)
        {
            _ = AnnounceAsync(handler);
        }
    }

    // The handshake as BatchingTcpTransport's core does it, peers judged by the same TlsSettings.Judge; DotNetty's
    // TlsHandler runs it. A refusal is logged with its reason here, where it is known.
    private TlsHandler TlsHandlerFor(FlushBatching.Tcp.TlsSettings tls, IChannel channel, Address? remote)
    {
        bool Validate(object sender, X509Certificate? certificate, X509Chain? chain, SslPolicyErrors errors)
        {
            var refusal = tls.Judge(certificate, chain, errors, remote?.ToString() ?? channel.RemoteAddress?.ToString() ?? "the peer");
            if (refusal is not null)
            {
                Log.Warning("TLS handshake refused: {0}", refusal);
            }

            return refusal is null;
        }

        if (remote is null)
        {
            return tls.RequireMutualAuthentication
                ? new TlsHandler(stream => new SslStream(stream, true, Validate), new ServerTlsSettings(tls.Certificate, negotiateClientCertificate: true))
                : TlsHandler.Server(tls.Certificate);
        }

        var own = tls.ClientCertificate;
        return new TlsHandler(
            stream => new SslStream(stream, true, Validate, own is null ? null : (_, _, _, _, _) => own),
            new ClientTlsSettings(BatchingTransportSettings.TargetHost(remote)));
    }

    private async Task AnnounceAsync(DotNettyAssociationHandler handler)
    {
        try
        {
            var handle = await handler.Ready.ConfigureAwait(false);
            var listener = await _associationListener.Task.ConfigureAwait(false);
            listener.Notify(new InboundAssociation(handle));
        }
        catch (Exception e)
        {
            Log.Debug("An inbound connection ended before it was set up: {0}", e.Message);
        }
    }
}
