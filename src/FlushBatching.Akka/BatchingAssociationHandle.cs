using Akka.Actor;
using Akka.Event;
using Akka.Remote.Transport;
using Google.Protobuf;

namespace FlushBatching.Akka;

/// <summary>
/// One association over one <see cref="ITransportConnection"/>, whichever stack carries it: writes go to the
/// connection, inbound payloads become <see cref="InboundPayload"/>s once Akka has registered its read handler, and the
/// end of the connection becomes one <see cref="Disassociated"/>.
/// </summary>
internal sealed class BatchingAssociationHandle : AssociationHandle, IPayloadReceiver
{
    private readonly ITransportConnection _connection;
    private readonly ILoggingAdapter _log;
    private IHandleEventListener? _listener;

    public BatchingAssociationHandle(Address localAddress, Address remoteAddress, ITransportConnection connection, ILoggingAdapter log)
        : base(localAddress, remoteAddress)
    {
        _connection = connection;
        _log = log;

        // The connection holds inbound payloads until StartReading: nothing is lost before Akka registers its handler.
        ReadHandlerSource.Task.ContinueWith(
            static (registered, state) =>
            {
                var handle = (BatchingAssociationHandle)state!;
                handle._listener = registered.Result;
                handle._connection.StartReading(handle);
            },
            this,
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously | TaskContinuationOptions.OnlyOnRanToCompletion,
            TaskScheduler.Default);
    }

    /// <summary>Hands <paramref name="payload"/> to the connection, which copies it at most once.</summary>
    /// <returns><c>false</c> while the connection is above its high-water mark or closed: Akka buffers and retries.</returns>
    public override bool Write(ByteString payload) => _connection.TryWrite(payload);

#pragma warning disable CS0672, CS0618 // Akka.Remote's SPI: the overload with a reason calls this one.
    /// <summary>Sends what is pending, then closes. Safe to call any number of times.</summary>
    public override void Disassociate() => _ = _connection.CloseAsync();
#pragma warning restore CS0672, CS0618

    void IPayloadReceiver.OnPayload(ByteString payload) => _listener!.Notify(new InboundPayload(payload));

    void IPayloadReceiver.OnClosed(Exception? reason) =>
        _listener!.Notify(new Disassociated(Disassociation.Report(_log, RemoteAddress, _connection, reason)));
}
