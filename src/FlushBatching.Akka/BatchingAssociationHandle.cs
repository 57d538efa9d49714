using Akka.Actor;
using Akka.Event;
using Akka.Remote.Transport;
using FlushBatching.Tcp;
using Google.Protobuf;

namespace FlushBatching.Akka;

/// <summary>
/// One association over one <see cref="ITransportConnection"/>, whichever stack carries it: writes go to the
/// connection, inbound payloads become <see cref="InboundPayload"/>s once Akka has registered its read handler, and the
/// end of the connection becomes one <see cref="Disassociated"/>.
/// </summary>
/// <remarks>
/// An inbound handle is closed when its peer sends no frame within <c>connection-timeout</c> (see
/// <see cref="CloseUnlessHeardWithin"/>): an Akka peer always speaks first, with its handshake, so a silent one holds a
/// connection for nothing. Until the first frame, how the connection ends goes to the <see cref="InboundSetupLog"/>,
/// not a line of its own.
/// </remarks>
internal sealed class BatchingAssociationHandle : AssociationHandle, IPayloadReceiver
{
    private readonly ITransportConnection _connection;
    private readonly ILoggingAdapter _log;
    private IHandleEventListener? _listener;
    private ITimer? _silence;
    private InboundSetupLog? _setupLog;
    private TimeSpan _silenceBound;
    private volatile bool _silenced;

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

    /// <summary>The connection the association runs over.</summary>
    internal ITransportConnection Connection => _connection;

    /// <summary>
    /// Aborts the connection unless a frame arrives within <paramref name="bound"/>, and from now until one does, reports
    /// how the connection ends to <paramref name="setupLog"/>. Called once, before the handle is announced. A peer that
    /// has sent nothing at all never gets here: the listener holds it among the silent until its first byte.
    /// </summary>
    public void CloseUnlessHeardWithin(TimeSpan bound, TimeProvider time, InboundSetupLog setupLog)
    {
        _setupLog = setupLog;
        _silenceBound = bound;
        Volatile.Write(ref _silence, time.CreateTimer(static state => ((BatchingAssociationHandle)state!).OnSilent(), this, bound, Timeout.InfiniteTimeSpan));
    }

    /// <summary>Hands <paramref name="payload"/> to the connection, which copies it at most once.</summary>
    /// <returns><c>false</c> while the connection is above its high-water mark or closed: Akka buffers and retries.</returns>
    public override bool Write(ByteString payload) => _connection.TryWrite(payload);

#pragma warning disable CS0672, CS0618 // Akka.Remote's SPI: the overload with a reason calls this one.
    /// <summary>
    /// Refuses writes, sends what is pending and closes, within <c>akka.remote.flush-wait-on-shutdown</c>; a peer that
    /// has stopped reading is aborted at that bound. Safe to call any number of times.
    /// </summary>
    public override void Disassociate()
    {
        // Akka.Remote closes an inbound handle that has sent no frame on its own handshake timeout (connection-timeout
        // under akka.remote.dot-netty.tcp), which can fire before this handle's bound: the same drop, the same line.
        if (StopWaitingForFirstFrame())
        {
            DropUnheard(new TimeoutException($"{_connection} sent no frame before Akka.Remote closed it (its handshake timeout, or shutdown)"));
        }

        _ = _connection.CloseAsync();
    }
#pragma warning restore CS0672, CS0618

    void IPayloadReceiver.OnPayload(ByteString payload)
    {
        if (_silence is not null)
        {
            StopWaitingForFirstFrame();
        }

        _listener!.Notify(new InboundPayload(payload));
    }

    void IPayloadReceiver.OnClosed(Exception? reason)
    {
        var unheard = StopWaitingForFirstFrame();
        DisassociateInfo info;
        if (_silenced)
        {
            info = DisassociateInfo.Unknown;
        }
        else if (unheard && reason is not null)
        {
            _setupLog!.Dropped(new IOException($"{_connection} ended before its first frame: {reason.Message}", reason));
            info = DisassociateInfo.Unknown;
        }
        else
        {
            info = Disassociation.Report(_log, RemoteAddress, _connection, reason);
        }

        _listener!.Notify(new Disassociated(info));
    }

    private void OnSilent()
    {
        if (!StopWaitingForFirstFrame())
        {
            return;
        }

        DropUnheard(new TimeoutException(
            $"{_connection} sent no frame within {SettingText.FormatDuration(_silenceBound)} ({SettingKeys.ConnectTimeout}), and was closed"));
        _connection.Abort();
    }

    // Ends the wait for the first frame, once, whichever of a frame, the bound, Akka's close or the end comes first: true for the one caller that found the peer still unheard.
    private bool StopWaitingForFirstFrame()
    {
        if (Interlocked.Exchange(ref _silence, null) is not { } timer)
        {
            return false;
        }

        timer.Dispose();
        return true;
    }

    // This node dropped an unheard peer itself: one line for it, and none more when the connection then ends.
    private void DropUnheard(Exception reason)
    {
        _silenced = true;
        _setupLog!.Dropped(reason);
    }
}
