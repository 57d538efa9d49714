using System.Net;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Admission;

namespace FlushBatching.Akka.SocketsStack;

/// <summary>The core's sockets as an <see cref="IConnectionStack"/>: a <see cref="FramedListener"/> and the <see cref="FramedConnector"/>.</summary>
internal sealed class SocketConnectionStack : IConnectionStack
{
    private readonly ConnectionSettings _settings;
    private FramedListener? _listener;

    public SocketConnectionStack(ConnectionSettings settings) => _settings = settings;

    public string Name => "sockets";

    public Task<IPEndPoint> ListenAsync(IPEndPoint endpoint, InboundSlots? slots, Action<ITransportConnection> onInbound, Action<Exception> onRejected)
    {
        _listener = FramedListener.Start(endpoint, _settings, slots, connection => onInbound(new SocketTransportConnection(connection)), onRejected);
        return Task.FromResult(_listener.LocalEndPoint);
    }

    public async Task<ITransportConnection> ConnectAsync(IPEndPoint endpoint, ConnectionSettings settings) =>
        new SocketTransportConnection(await FramedConnector.ConnectAsync(endpoint, settings).ConfigureAwait(false));

    public async Task StopListeningAsync()
    {
        if (_listener is { } listener)
        {
            await listener.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <summary>Nothing to stop: the stack has no threads, and each connection is closed by its owner.</summary>
    public Task StopAsync() => Task.CompletedTask;

    public string StillOpen => "";
}
