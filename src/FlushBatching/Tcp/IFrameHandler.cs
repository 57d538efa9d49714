using System.Buffers;

namespace FlushBatching.Tcp;

/// <summary>Receives a connection's inbound frames, in order, and the news of its end.</summary>
/// <remarks>
/// Called on one thread at a time per connection. A handler that throws closes that connection, with the
/// exception as the reason.
/// </remarks>
public interface IFrameHandler
{
    /// <summary>One inbound frame's payload, valid only during the call: copy what must outlive it.</summary>
    void OnFrame(FramedConnection connection, ReadOnlySequence<byte> payload);

    /// <summary>
    /// Called once, after the last frame, when the connection has ended: <paramref name="reason"/> is
    /// <c>null</c> for an orderly close by either side, else what ended it (an <see cref="Framing.InvalidFrameException"/>,
    /// a <see cref="System.Net.Sockets.SocketException"/>, ...).
    /// </summary>
    void OnClosed(FramedConnection connection, Exception? reason);
}
