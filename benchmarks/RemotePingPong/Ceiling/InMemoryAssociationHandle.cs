using Akka.Actor;
using Akka.Remote.Transport;
using Google.Protobuf;

namespace RemotePingPong.Ceiling;

/// <summary>
/// One end of an in-memory association: <see cref="Write"/> notifies the other end's read listener on the calling
/// thread, or queues the event until that listener is registered.
/// </summary>
internal sealed class InMemoryAssociationHandle : AssociationHandle
{
    private readonly InMemoryTransport _owner;
    private readonly object _gate = new();
    private readonly Queue<IHandleEvent> _early = new();
    private IHandleEventListener? _listener;
    private InMemoryAssociationHandle _peer = null!;
    private int _disassociated;

    public InMemoryAssociationHandle(Address localAddress, Address remoteAddress, InMemoryTransport owner)
        : base(localAddress, remoteAddress)
    {
        _owner = owner;
        ReadHandlerSource.Task.ContinueWith(
            static (registered, state) => ((InMemoryAssociationHandle)state!).Register(registered.Result),
            this,
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously | TaskContinuationOptions.OnlyOnRanToCompletion,
            TaskScheduler.Default);
    }

    public static void Pair(InMemoryAssociationHandle a, InMemoryAssociationHandle b)
    {
        a._peer = b;
        b._peer = a;
    }

    /// <returns><c>false</c> once either end has disassociated.</returns>
    public override bool Write(ByteString payload)
    {
        if (Volatile.Read(ref _disassociated) != 0)
        {
            return false;
        }

        _peer.Deliver(new InboundPayload(payload));
        return true;
    }

#pragma warning disable CS0672, CS0618 // Akka.Remote's SPI: the overload with a reason calls this one.
    /// <summary>Ends the association at both ends, as a closed TCP connection does: each end's listener hears it once.</summary>
    public override void Disassociate()
    {
        if (Interlocked.Exchange(ref _disassociated, 1) != 0)
        {
            return;
        }

        _peer.Disassociate();  // returns at once when the peer began this
        _owner.Forget(this);
        Deliver(new Disassociated(DisassociateInfo.Unknown));
    }
#pragma warning restore CS0672, CS0618

    private void Deliver(IHandleEvent handleEvent)
    {
        if (Volatile.Read(ref _listener) is not { } listener)
        {
            lock (_gate)
            {
                if (_listener is null)
                {
                    _early.Enqueue(handleEvent);
                    return;
                }

                listener = _listener;
            }
        }

        listener.Notify(handleEvent);
    }

    // Events that came before the listener go to it first, in order; a Deliver racing with this waits on the gate.
    private void Register(IHandleEventListener listener)
    {
        lock (_gate)
        {
            while (_early.TryDequeue(out var early))
            {
                listener.Notify(early);
            }

            Volatile.Write(ref _listener, listener);
        }
    }
}
