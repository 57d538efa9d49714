using System.Net.Sockets;
using DotNetty.Transport.Channels;
using DotNetty.Transport.Channels.Sockets;
using FlushBatching.Tcp;

namespace FlushBatching.Akka;

/// <summary>
/// DotNetty's server channel, except that a round of accepting that took no connection pauses accepting for
/// <see cref="FramedListener.AcceptErrorPause"/> (a second, as Netty and the core's listener pause) before the next one,
/// and that with <see cref="ConnectionSettings.MaxInboundConnections"/> accepted channels open it accepts no more
/// until one closes, as the core's listener does.
/// DotNetty 0.7.6's <see cref="TcpServerSocketChannel"/> catches a failed accept (out of file descriptors, say), logs it
/// only to its EventSource and starts the next accept at once: with connections waiting in the backlog, every accept
/// fails again at once and the event loop spins a core. Nothing reaches the pipeline, so a handler cannot pause it.
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
    private readonly Action<Exception> _onPause;
    private readonly InboundSlots? _slots;
    private bool _tookNothing;
    private bool _holdsSlot;
    private bool _waitingForSlot;

    /// <param name="socket">The listening socket, not yet bound.</param>
    /// <param name="onPause">Told once per pause, with why, for the transport's log.</param>
    /// <param name="slots">The bound on accepted channels open at once; <c>null</c> for none.</param>
    public PausingServerSocketChannel(Socket socket, Action<Exception> onPause, InboundSlots? slots)
        : base(socket)
    {
        _onPause = onPause;
        _slots = slots;
        slots?.OnFreed(() => EventLoop.Execute(static state => ((PausingServerSocketChannel)state).ResumeAtBound(), this));
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
        if (_holdsSlot)
        {
            // The round that failed took no channel: its slot is free again.
            _holdsSlot = false;
            _slots!.Release();
        }

        _onPause(new IOException(
            $"Accepting on {LocalAddress} failed (DotNetty names the reason only on its EventSource; out of file descriptors is the usual one); " +
            $"accepting again in {SettingText.FormatDuration(FramedListener.AcceptErrorPause)}."));
        EventLoop.Schedule(static state => ((PausingServerSocketChannel)state).Resume(), this, FramedListener.AcceptErrorPause);
    }

    private void Resume()
    {
        if (Open)
        {
            AcceptWithinBound();
        }
    }

    // The next accept, once a slot is held for what it takes: at the bound, reported once, when a channel closes.
    private void AcceptWithinBound()
    {
        if (_slots is not null && !_holdsSlot && !Socket.SafeHandle.IsClosed)
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

        _waitingForSlot = false;
        base.ScheduleSocketRead();
    }

    private void ResumeAtBound()
    {
        if (_waitingForSlot && Open)
        {
            AcceptWithinBound();
        }
    }

    // An accepted channel takes the slot held for its accept, and gives it back when it closes.
    private void Took(object message)
    {
        if (_holdsSlot && message is IChannel child)
        {
            _holdsSlot = false;
            _slots!.ReleaseWhen(child.CloseCompletion);
        }
    }

    private sealed class RoundWatch(PausingServerSocketChannel channel) : ChannelHandlerAdapter
    {
        private bool _took;

        public override void ChannelRead(IChannelHandlerContext context, object message)
        {
            _took = true;
            channel.Took(message);
            context.FireChannelRead(message);
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
