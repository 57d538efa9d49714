using System.Net;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Admission;

namespace FlushBatching.Akka;

/// <summary>
/// An I/O stack under the Akka adapter: listens and connects, and makes each connection an
/// <see cref="ITransportConnection"/>, TLS handshake included. One per transport instance.
/// </summary>
internal interface IConnectionStack
{
    /// <summary>The stack's name in the start-up log line.</summary>
    string Name { get; }

    /// <summary>The stack's name and how it runs, for the start-up log line.</summary>
    string Description => Name;

    /// <summary>What runs the stack's event loops (<c>event-loop</c>'s value), or <c>null</c> for a stack that has none.</summary>
    string? EventLoop => null;

    /// <summary>Binds <paramref name="endpoint"/> and announces every inbound connection once it is set up.</summary>
    /// <param name="endpoint">Where to listen; port 0 lets the system choose.</param>
    /// <param name="slots">The bound on open inbound connections (<c>max-inbound-connections</c>), or <c>null</c> for none.</param>
    /// <param name="onInbound">Called once per connection, after its TLS handshake.</param>
    /// <param name="onRejected">Called with the reason when an accepted connection could not be set up.</param>
    /// <returns>The bound endpoint.</returns>
    Task<IPEndPoint> ListenAsync(IPEndPoint endpoint, InboundSlots? slots, Action<ITransportConnection> onInbound, Action<Exception> onRejected);

    /// <summary>Connects to <paramref name="endpoint"/> within the settings' connect timeout, TLS handshake included.</summary>
    Task<ITransportConnection> ConnectAsync(IPEndPoint endpoint, ConnectionSettings settings);

    /// <summary>Stops accepting; connections already announced stay open.</summary>
    Task StopListeningAsync();

    /// <summary>
    /// Closes what the stack still holds open and releases what it owns (its threads). The transport bounds the wait,
    /// and names <see cref="StillOpen"/> in its log when the bound passes.
    /// </summary>
    Task StopAsync();

    /// <summary>What the stack still holds open (channels, event loops not terminated), for a log line; empty when nothing.</summary>
    string StillOpen { get; }
}
