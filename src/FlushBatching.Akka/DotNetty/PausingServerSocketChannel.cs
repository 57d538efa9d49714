using System.Net.Sockets;
using DotNetty.Transport.Channels;
using DotNetty.Transport.Channels.Sockets;
using FlushBatching.Tcp;

namespace FlushBatching.Akka;

/// <summary>
/// DotNetty's server channel, except that a round of accepting that took no connection pauses accepting for
/// <see cref="FramedListener.AcceptErrorPause"/> (a second, as Netty and the core's listener pause) before the next one.
/// DotNetty 0.7.6's <see cref="TcpServerSocketChannel"/> catches a failed accept (out of file descriptors, say), logs it
/// only to its EventSource and starts the next accept at once: with connections waiting in the backlog, every accept
/// fails again at once and the event loop spins a core. Nothing reaches the pipeline, so a handler cannot pause it.
/// </summary>
/// <remarks>
/// A round that took nothing is one whose <c>ChannelReadComplete</c> came with no <c>ChannelRead</c> before it: the
/// channel fires both for every accept it completes, and only a failed one (or the close of the channel) reads no
/// connection. The channel does not say why it failed, so the report names what it can. A round ended by the listening
/// socket's own close (the listener stopping) is no failure: the channel closes at once, as DotNetty's does. Touched on
/// its event loop only, as every channel's state is.
/// </remarks>
internal sealed class PausingServerSocketChannel : TcpServerSocketChannel
{
    private readonly Action<Exception> _onPause;
    private bool _tookNothing;

    /// <param name="socket">The listening socket, not yet bound.</param>
    /// <param name="onPause">Told once per pause, with why, for the transport's log.</param>
    public PausingServerSocketChannel(Socket socket, Action<Exception> onPause)
        : base(socket)
    {
        _onPause = onPause;
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
            base.ScheduleSocketRead();
            return;
        }

        _tookNothing = false;
        _onPause(new IOException(
            $"Accepting on {LocalAddress} failed (DotNetty names the reason only on its EventSource; out of file descriptors is the usual one); " +
            $"accepting again in {SettingText.FormatDuration(FramedListener.AcceptErrorPause)}."));
        EventLoop.Schedule(static state => ((PausingServerSocketChannel)state).Resume(), this, FramedListener.AcceptErrorPause);
    }

    private void Resume()
    {
        if (Open)
        {
            base.ScheduleSocketRead();
        }
    }

    private sealed class RoundWatch(PausingServerSocketChannel channel) : ChannelHandlerAdapter
    {
        private bool _took;

        public override void ChannelRead(IChannelHandlerContext context, object message)
        {
            _took = true;
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
