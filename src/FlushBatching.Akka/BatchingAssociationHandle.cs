using System.Buffers;
using Akka.Actor;
using Akka.Event;
using Akka.Remote.Transport;
using FlushBatching.Framing;
using FlushBatching.Tcp;
using Google.Protobuf;

namespace FlushBatching.Akka;

/// <summary>
/// One association over one <see cref="FramedConnection"/>: writes become frames in the connection's pooled
/// buffers, inbound frames become <see cref="InboundPayload"/>s once Akka has registered its read handler.
/// </summary>
internal sealed class BatchingAssociationHandle : AssociationHandle, IFrameHandler
{
    private readonly FramedConnection _connection;
    private readonly ILoggingAdapter _log;
    private IHandleEventListener? _listener;

    public BatchingAssociationHandle(Address localAddress, Address remoteAddress, FramedConnection connection, ILoggingAdapter log)
        : base(localAddress, remoteAddress)
    {
        _connection = connection;
        _log = log;

        // The connection holds inbound frames until Start: nothing is lost before Akka registers its handler.
        ReadHandlerSource.Task.ContinueWith(
            static (registered, state) =>
            {
                var handle = (BatchingAssociationHandle)state!;
                handle._listener = registered.Result;
                handle._connection.Start(handle);
            },
            this,
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously | TaskContinuationOptions.OnlyOnRanToCompletion,
            TaskScheduler.Default);
    }

    /// <summary>Copies <paramref name="payload"/> once, into the connection's pooled frame buffer.</summary>
    /// <returns><c>false</c> while the connection is above its high-water mark or closed: Akka buffers and retries.</returns>
    public override bool Write(ByteString payload) => _connection.TryWrite(payload.Span);

#pragma warning disable CS0672, CS0618 // Akka.Remote's SPI: the overload with a reason calls this one.
    /// <summary>Sends what is pending, then closes. Safe to call any number of times.</summary>
    public override void Disassociate() => _ = _connection.CloseAsync();
#pragma warning restore CS0672, CS0618

    void IFrameHandler.OnFrame(FramedConnection connection, ReadOnlySequence<byte> payload)
    {
        // One copy: straight from the receive buffer into the ByteString's own array.
        var bytes = payload.IsSingleSegment
            ? ByteString.CopyFrom(payload.FirstSpan)
            : UnsafeByteOperations.UnsafeWrap(payload.ToArray());
        _listener!.Notify(new InboundPayload(bytes));
    }

    void IFrameHandler.OnClosed(FramedConnection connection, Exception? reason) =>
        _listener!.Notify(new Disassociated(Disassociation.Report(_log, RemoteAddress, connection, reason, reason is InvalidFrameException)));
}
