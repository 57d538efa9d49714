using System.Net;
using System.Net.Sockets;
using System.Security.Authentication;
using Akka.Actor;
using Akka.Configuration;
using Akka.Event;
using Akka.Remote;
using Akka.Remote.Transport;
using Akka.Remote.Transport.DotNetty;
using FlushBatching.Tcp;

namespace FlushBatching.Akka;

/// <summary>
/// An Akka.Remote transport on FlushBatching's framed connections: the stock DotNetty transport's wire format
/// (4-byte length prefix, same byte order and frame limit), with writes batched by count, bytes and time and
/// flushed the moment a burst ends, one pooled buffer per frame and no Task per message.
/// </summary>
/// <remarks>
/// Enable it with one line in the existing section:
/// <code>akka.remote.dot-netty.tcp.transport-class = "FlushBatching.Akka.BatchingTcpTransport, FlushBatching.Akka"</code>
/// Every other key of the section keeps its meaning, and <c>batching.max-pending-bytes</c> and
/// <c>batching.flush-interval</c> now work. Keys the section leaves out take the defaults of the package's
/// <c>reference.conf</c>. Nodes on this transport and nodes on the stock one talk to each other.
/// </remarks>
public sealed class BatchingTcpTransport : Transport
{
    private readonly BatchingTransportSettings _settings;
    private readonly ILoggingAdapter _log;
    private readonly TaskCompletionSource<IAssociationEventListener> _associationListener =
        new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly OpenConnections<FramedConnection> _connections = new();
    private FramedListener? _listener;
    private volatile bool _shutDown;

    /// <summary>Created by Akka.Remote through reflection, with the transport's own config section.</summary>
    /// <param name="system">The actor system the transport serves.</param>
    /// <param name="config">The transport's section, such as <c>akka.remote.dot-netty.tcp</c>.</param>
    /// <exception cref="InvalidSettingException">A key has a bad value; the message names the key, the value and what is allowed.</exception>
    public BatchingTcpTransport(ActorSystem system, Config config)
    {
        System = system ?? throw new ArgumentNullException(nameof(system));
        Config = config;
        _settings = BatchingTransportSettings.Create(system, config);
        _log = Logging.GetLogger(system, GetType());
        SchemeIdentifier = _settings.SchemeIdentifier;
    }

    /// <summary><c>tcp</c>, or <c>ssl.tcp</c> with TLS: Akka's addresses read <c>akka.tcp://system@host:port</c>.</summary>
    public override string SchemeIdentifier { get; protected set; }

    /// <summary>
    /// The largest payload a frame carries: <c>maximum-frame-size</c> less the 4-byte prefix, which is what a stock
    /// node accepts. Akka.Remote refuses larger messages at the sender with an OversizedPayloadException.
    /// </summary>
    public override long MaximumPayloadBytes => _settings.Connection.Framing.MaximumPayloadSize;

    /// <inheritdoc />
    public override bool IsResponsibleFor(Address remote) => true;

    /// <inheritdoc />
    public override async Task<(Address, TaskCompletionSource<IAssociationEventListener>)> Listen()
    {
        var endpoint = await _settings.ResolveAsync(_settings.Hostname, _settings.Port).ConfigureAwait(false);
        try
        {
            _listener = FramedListener.Start(endpoint, _settings.Connection, OnInbound, OnRejected);
        }
        catch (SocketException e)
        {
            throw new RemoteTransportException($"Failed to bind to [{endpoint}]: {e.Message}", e);
        }

        var address = _settings.ListenAddress(SchemeIdentifier, System.Name, _listener.LocalEndPoint);
        _log.Info("FlushBatching transport listening on akka.{0} ({1}); {2}", address, _listener.LocalEndPoint, _settings);
        return (address, _associationListener);
    }

    /// <inheritdoc />
    /// <exception cref="InvalidAssociationException">The peer refused, did not answer within <c>connection-timeout</c>, or failed the TLS handshake.</exception>
    public override async Task<AssociationHandle> Associate(Address remoteAddress)
    {
        ArgumentNullException.ThrowIfNull(remoteAddress);
        if (_shutDown || _listener is null)
        {
            throw new InvalidAssociationException($"Cannot associate with {remoteAddress}: the transport is {(_shutDown ? "shut down" : "not listening")}.");
        }

        FramedConnection connection;
        try
        {
            var endpoint = await _settings.ConnectableEndPointAsync(remoteAddress).ConfigureAwait(false);
            connection = await FramedConnector.ConnectAsync(endpoint, _settings.ConnectionTo(remoteAddress)).ConfigureAwait(false);
        }
        catch (Exception e) when (e is TimeoutException or IOException or SocketException or AuthenticationException)
        {
            throw new InvalidAssociationException($"Failed to associate with {remoteAddress}: {e.Message}", e);
        }

        return Track(connection, remoteAddress);
    }

    /// <summary>Stops listening and closes every connection, sending what each has pending first.</summary>
    public override async Task<bool> Shutdown()
    {
        _shutDown = true;
        if (_listener is { } listener)
        {
            await listener.DisposeAsync().ConfigureAwait(false);
        }

        await _connections.CloseAll(connection => connection.CloseAsync()).ConfigureAwait(false);
        return true;
    }

    private void OnInbound(FramedConnection connection)
    {
        // Tracked at once, so that shutdown closes it even if it is never announced.
        var remote = BatchingTransportSettings.PeerAddress(SchemeIdentifier, System.Name, connection.RemoteEndPoint);
        _ = AnnounceAsync(Track(connection, remote));
    }

    private async Task AnnounceAsync(BatchingAssociationHandle handle)
    {
        // Accepted connections wait here until Remoting has said who hears of them.
        var listener = await _associationListener.Task.ConfigureAwait(false);
        listener.Notify(new InboundAssociation(handle));
    }

    private BatchingAssociationHandle Track(FramedConnection connection, Address remote)
    {
        _connections.Add(connection, connection.Completion);
        if (_shutDown)
        {
            connection.Abort();
        }

        var local = _settings.LocalAddress(SchemeIdentifier, System.Name, connection.LocalEndPoint);
        return new BatchingAssociationHandle(local, remote, connection, _log);
    }

    private void OnRejected(Exception reason) =>
        _log.Warning("FlushBatching transport dropped an inbound connection before it was set up: {0}", reason.Message);
}
