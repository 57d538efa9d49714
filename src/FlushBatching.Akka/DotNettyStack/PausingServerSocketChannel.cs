using System.Net.Sockets;
using DotNetty.Common.Concurrency;
using DotNetty.Common.Utilities;
using DotNetty.Transport.Channels;
using DotNetty.Transport.Channels.Sockets;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Admission;

namespace FlushBatching.Akka.DotNettyStack;

/// <summary>
/// DotNetty's server channel, except that a round of accepting that took no connection pauses accepting for
/// <see cref="AcceptPause.Duration"/> (a second, as Netty and the core's listener pause) before the next one,
/// and that with <see cref="ConnectionSettings.MaxInboundConnections"/> accepted channels open it accepts no more
/// until one closes, as the core's listener does.
/// DotNetty 0.7.6's <see cref="TcpServerSocketChannel"/> catches a failed accept (out of file descriptors, say), logs it
/// only to its EventSource and starts the next accept at once: with connections waiting in the backlog, every accept
/// fails again at once and the event loop spins a core. Nothing reaches the pipeline, so a handler cannot pause it.
/// Each accept is started here, not by DotNetty's channel, for the same reason: on Windows, .NET makes the accepted
/// socket before the accept starts, so out of sockets or buffers <c>AcceptAsync</c> throws at once, and DotNetty's
/// channel retries that inside a loop of its own that never ends its round.
/// </summary>
/// <remarks>
/// A round that took nothing is one whose <c>ChannelReadComplete</c> came with no <c>ChannelRead</c> before it: the
/// channel fires both for every accept it completes, and only a failed one (or the close of the channel) reads no
/// connection. The channel does not say why it failed, so the report names what it can. A round ended by the listening
/// socket's own close (the listener stopping) is no failure: the channel closes at once, as DotNetty's does. Touched on
/// its event loop only, as every channel's state is. A slot of the bound is taken before each accept and becomes the
/// accepted channel's, given back when it closes; a round that took nothing gives its slot back.
/// </remarks>
internal sealed class PausingServerSocketChannel : TcpServerSocketChannel
{
    private static readonly Action<object, object> FinishAccept =
        static (channel, operation) => ((AbstractSocketUnsafe)((IChannel)channel).Unsafe).FinishRead((SocketChannelAsyncOperation)operation);

    private static readonly AttributeKey<SilentInbound.Entry> SilentEntry = AttributeKey<SilentInbound.Entry>.ValueOf("flushbatching-silent");

    private readonly Action<Exception> _onPause;
    private readonly InboundSlots? _slots;
    private readonly Func<Socket, SocketAsyncEventArgs, bool> _acceptAsync;
    private readonly IDisposable? _freed;
    private SocketChannelAsyncOperation? _accepting;
    private bool _tookNothing;
    private bool _holdsSlot;
    private bool _waitingForSlot;

    /// <param name="socket">The listening socket, not yet bound.</param>
    /// <param name="onPause">Told once per pause, with why, and of each channel closed as the longest silent, for the transport's log.</param>
    /// <param name="slots">The bound on accepted channels open at once; <c>null</c> for none.</param>
    /// <param name="acceptAsync">Starts an accept, as <see cref="Socket.AcceptAsync(SocketAsyncEventArgs)"/> does; a test gives one that throws as Windows' does.</param>
    public PausingServerSocketChannel(Socket socket, Action<Exception> onPause, InboundSlots? slots, Func<Socket, SocketAsyncEventArgs, bool>? acceptAsync = null)
        : base(socket)
    {
        _onPause = onPause;
        _slots = slots;
        _acceptAsync = acceptAsync ?? (static (listening, operation) => listening.AcceptAsync(operation));
        _freed = slots?.OnFreed(ResumeOnLoop);
        Pipeline.AddFirst("accept-rounds", new RoundWatch(this));
    }

    // Called by DotNetty once a round of accepting has ended and it wants the next, and when reading starts.
    protected override void ScheduleSocketRead()
    {
        // A listening socket closed under the channel (the listener stopping) also ends a round with nothing: DotNetty's
        // next accept then finds it closed and closes the channel, at once, with nothing to report.
        if (!_tookNothing || Socket.SafeHandle.IsClosed)
        {
            _tookNothing = false;
            AcceptWithinBound();
            return;
        }

        _tookNothing = false;
        var error = _accepting?.SocketError ?? SocketError.SocketError;
        if (AcceptPause.IsPeerGone(error))
        {
            // A peer that reset its connection before it was taken: nothing is wrong here, and the next accept starts
            // at once, with the slot this one held, as the core's listener skips a reset.
            AcceptWithinBound();
            return;
        }

        Pause($"{error} ({new SocketException((int)error).Message})");
    }

    protected override void DoClose()
    {
        base.DoClose();
        _freed?.Dispose();
        _accepting?.Dispose();
    }

    // A slot given back, by a connection of any listener that shares the budget: tried again on this channel's loop.
    private void ResumeOnLoop()
    {
        try
        {
            EventLoop.Execute(static state => ((PausingServerSocketChannel)state).ResumeAtBound(), this);
        }
        catch (RejectedExecutionException)
        {
            // The loop has shut down with the channel: nothing to resume.
        }
    }

    // A round that took nothing: its slot is free again, and the next accept starts after the pause.
    private void Pause(string why)
    {
        if (_holdsSlot)
        {
            _holdsSlot = false;
            _slots!.Release();
        }

        _onPause(AcceptPause.Report(LocalAddress, why));
        EventLoop.Schedule(static state => ((PausingServerSocketChannel)state).Resume(), this, AcceptPause.Duration);
    }

    // One accept, as DotNetty's channel starts it, except that one that throws before it starts pauses as a failed one
    // does, where DotNetty's tries again at once.
    private void BeginAccept()
    {
        _accepting ??= new SocketChannelAsyncOperation(this, setEmptyBuffer: false);
        try
        {
            if (!_acceptAsync(Socket, _accepting))
            {
                EventLoop.Execute(FinishAccept, this, _accepting);
            }
        }
        catch (Exception e) when (e is ObjectDisposedException or SocketException { SocketErrorCode: SocketError.OperationAborted or SocketError.InvalidArgument })
        {
            // The listening socket closed under the channel: the listener is stopping.
            ObservedTasks.Observe(CloseAsync());
        }
        catch (SocketException e)
        {
            Pause($"{e.SocketErrorCode} before it started ({e.Message})");
        }
        catch (Exception e)
        {
            // As DotNetty's channel ends on what it does not expect: the pipeline hears it, and the channel closes.
            Pipeline.FireExceptionCaught(e);
            ObservedTasks.Observe(CloseAsync());
        }
    }

    private void Resume()
    {
        if (Open)
        {
            AcceptWithinBound();
        }
    }

    // The next accept, once no more are silent than their bound (the oldest closed once its grace is over: tried again
    // then) and a slot is held for what it takes (at the bound, reported once, when a channel closes).
    private void AcceptWithinBound()
    {
        if (_slots is not null && !Socket.SafeHandle.IsClosed)
        {
            if (!_slots.Silent.TryTrim(out var wait))
            {
                EventLoop.Schedule(static state => ((PausingServerSocketChannel)state).Resume(), this, wait);
                return;
            }

            if (!_holdsSlot)
            {
                if (!_slots.TryTake())
                {
                    if (!_waitingForSlot)
                    {
                        _waitingForSlot = true;
                        _onPause(_slots.Paused(LocalAddress));
                    }

                    return;
                }

                _holdsSlot = true;
            }
        }

        _waitingForSlot = false;
        BeginAccept();
    }

    private void ResumeAtBound()
    {
        if (_waitingForSlot && Open)
        {
            AcceptWithinBound();
        }
    }

    /// <summary>Where an accepted channel is among the silent, for the listener to hear it; <c>null</c> with no bound.</summary>
    public static SilentInbound.Entry? SilentEntryOf(IChannel child) => child.GetAttribute(SilentEntry).Get();

    // An accepted channel takes the slot held for its accept, and gives it back when it closes; it counts among the silent
    // from now, on this loop, so that the count is exact for the next accept. Closed to make room, it is said here, once.
    // A round takes one accept unless DotNetty's MaxMessagesPerRead is raised: a channel more takes a slot of its own, or
    // is closed at once, unregistered, as DotNetty's acceptor closes one it cannot register. False for that one.
    private bool Took(object message)
    {
        if (_slots is null || message is not IChannel child)
        {
            return true;
        }

        if (_holdsSlot)
        {
            _holdsSlot = false;
        }
        else if (!_slots.TryTake())
        {
            child.Unsafe.CloseForcibly();
            _onPause(new IOException($"The connection {SetupTimeouts.Inbound(child.RemoteAddress, LocalAddress)} was closed as it was accepted: one round of accepting took more than {SettingKeys.MaxInboundConnections} allows."));
            return false;
        }

        _slots.ReleaseWhen(child.CloseCompletion);
        var silent = _slots.Silent;
        child.GetAttribute(SilentEntry).Set(silent.Add(() =>
        {
            _onPause(silent.Closed(child.RemoteAddress, LocalAddress));
            ObservedTasks.Observe(child.CloseAsync());
        }));
        return true;
    }

    private sealed class RoundWatch(PausingServerSocketChannel channel) : ChannelHandlerAdapter
    {
        private bool _took;

        public override void ChannelRead(IChannelHandlerContext context, object message)
        {
            _took = true;
            if (channel.Took(message))
            {
                context.FireChannelRead(message);
            }
        }

        public override void ChannelReadComplete(IChannelHandlerContext context)
        {
            // A closed channel reads nothing either: it has nothing to pause.
            channel._tookNothing = !_took && channel.Active;
            _took = false;
            context.FireChannelReadComplete();
        }
    }
}
