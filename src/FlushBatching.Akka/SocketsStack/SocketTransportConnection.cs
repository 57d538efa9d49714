using System.Buffers;
using System.Net;
using FlushBatching.Tcp;
using Google.Protobuf;

namespace FlushBatching.Akka.SocketsStack;

/// <summary>A core <see cref="FramedConnection"/> as the adapter's <see cref="ITransportConnection"/>.</summary>
internal sealed class SocketTransportConnection : ITransportConnection, IFrameHandler
{
    private readonly FramedConnection _connection;
    private IPayloadReceiver? _receiver;

    public SocketTransportConnection(FramedConnection connection) => _connection = connection;

    public IPEndPoint LocalEndPoint => _connection.LocalEndPoint;

    public IPEndPoint RemoteEndPoint => _connection.RemoteEndPoint;

    public long UnsentBytes => _connection.UnsentBytes;

    /// <summary>Unsent bytes above which writes are refused now; tests read it.</summary>
    internal long HighWaterMark => _connection.HighWaterMark;

    public Task Completion => _connection.Completion;

    /// <summary>Copies <paramref name="payload"/> once, into the connection's pooled frame buffer.</summary>
    public bool TryWrite(ByteString payload) => _connection.TryWrite(payload.Span);

    public void StartReading(IPayloadReceiver receiver)
    {
        _receiver = receiver;
        _connection.Start(this);
    }

    public Task CloseAsync() => _connection.CloseAsync();

    public void Abort() => _connection.Abort();

    public override string ToString() => _connection.ToString();

    void IFrameHandler.OnFrame(FramedConnection connection, ReadOnlySequence<byte> payload) =>
        // One copy: straight from the receive buffer into the ByteString's own array.
        _receiver!.OnPayload(payload.IsSingleSegment
            ? ByteString.CopyFrom(payload.FirstSpan)
            : UnsafeByteOperations.UnsafeWrap(payload.ToArray()));

    void IFrameHandler.OnClosed(FramedConnection connection, Exception? reason) => _receiver!.OnClosed(reason);
}
