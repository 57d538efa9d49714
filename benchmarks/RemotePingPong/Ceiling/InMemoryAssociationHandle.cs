using Akka.Actor;
using Akka.Remote.Transport;
using Google.Protobuf;

namespace RemotePingPong.Ceiling;

/// <summary>
/// One end of an in-memory association: <see cref="Write"/> notifies the other end's read listener on the calling
/// thread, or after the transport's thread hand-offs (<see cref="HandOff{T}"/>), or queues the event until that listener
/// is registered.
/// </summary>
internal sealed class InMemoryAssociationHandle : AssociationHandle
{
    private readonly InMemoryTransport _owner;
    private readonly object _gate = new();
    private readonly Queue<IHandleEvent> _early = new();
    private IHandleEventListener? _listener;
    private InMemoryAssociationHandle _peer = null!;
    private Action<IHandleEvent> _toPeer = null!;
    private bool _copyPayloads;
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

    /// <param name="handOffs">How many thread hand-offs each end's events cross on their way to the other end.</param>
    /// <param name="copyPayloads">Whether each payload reaches the other end as a copy in an array of its own.</param>
    public static void Pair(InMemoryAssociationHandle a, InMemoryAssociationHandle b, int handOffs, bool copyPayloads)
    {
        a._peer = b;
        b._peer = a;
        a._copyPayloads = b._copyPayloads = copyPayloads;
        a._toPeer = Through(handOffs, b.FromPeer);
        b._toPeer = Through(handOffs, a.FromPeer);
    }

    private static Action<IHandleEvent> Through(int handOffs, Action<IHandleEvent> end)
    {
        for (var i = 0; i < handOffs; i++)
        {
            end = new HandOff<IHandleEvent>(end).Add;
        }

        return end;
    }

    /// <returns><c>false</c> once either end has disassociated.</returns>
    public override bool Write(ByteString payload)
    {
        if (Volatile.Read(ref _disassociated) != 0)
        {
            return false;
        }

        _toPeer(new InboundPayload(_copyPayloads ? ByteString.CopyFrom(payload.Span) : payload));
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

        _toPeer(new Disassociated(DisassociateInfo.Unknown));  // after every payload this end wrote
        _owner.Forget(this);
        Deliver(new Disassociated(DisassociateInfo.Unknown));
    }

    private void FromPeer(IHandleEvent handleEvent)
    {
        if (handleEvent is Disassociated)
        {
            Disassociate();  // returns at once when this end began it
        }
        else
        {
            Deliver(handleEvent);
        }
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
