using System.Net;
using Google.Protobuf;

namespace FlushBatching.Akka;

/// <summary>
/// The seam between the Akka adapter and an I/O stack: what one framed connection offers, whichever stack carries it.
/// The adapter (<see cref="FlushBatchingTransport"/>, <see cref="BatchingAssociationHandle"/>) is written once
/// against it; each stack (<see cref="IConnectionStack"/>) makes connections.
/// </summary>
internal interface ITransportConnection
{
    /// <summary>The local end of the connection.</summary>
    IPEndPoint LocalEndPoint { get; }

    /// <summary>
    /// The remote end of the connection; an IPv4 peer as an IPv4 address, never IPv6-mapped (the DotNetty stack unmaps
    /// its dual-mode sockets' addresses), as Akka's addresses and the metrics' peer tag name it.
    /// </summary>
    IPEndPoint RemoteEndPoint { get; }

    /// <summary>Bytes accepted by <see cref="TryWrite"/> and not yet handed to the socket.</summary>
    long UnsentBytes { get; }

    /// <summary>Completes when the connection has ended and its resources are released.</summary>
    Task Completion { get; }

    /// <summary>
    /// Queues one frame carrying <paramref name="payload"/>, from any thread, without blocking, in order.
    /// <c>false</c> when the connection is above its high-water mark or closing: nothing was queued.
    /// </summary>
    bool TryWrite(ByteString payload);

    /// <summary>
    /// Starts delivering inbound payloads to <paramref name="receiver"/>, those that arrived before first, then the
    /// end of the connection once. Until this call nothing is delivered and nothing is lost.
    /// </summary>
    void StartReading(IPayloadReceiver receiver);

    /// <summary>
    /// Refuses writes from now on, sends what is queued, then closes; aborts at <c>ConnectionSettings.CloseTimeout</c>
    /// from the first call if the peer has not taken it all by then. Safe to call any number of times.
    /// </summary>
    Task CloseAsync();

    /// <summary>Closes at once, dropping what is not yet sent.</summary>
    void Abort();
}
