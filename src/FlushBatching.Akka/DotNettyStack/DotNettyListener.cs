using System.Net;
using System.Net.Sockets;
using DotNetty.Transport.Bootstrapping;
using DotNetty.Transport.Channels;
using DotNetty.Transport.Channels.Sockets;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Admission;

namespace FlushBatching.Akka.DotNettyStack;

/// <summary>
/// The DotNetty stack's listener: accepts channels on the server event loops, announces each one once its handshake is
/// done within <c>connection-timeout</c>, pauses accepting for a second when accepting fails (reported through the
/// transport's rejections, as the core's listener reports it), and stops accepting without dropping a connection
/// accepted at that moment.
/// </summary>
/// <remarks>
/// What a connection that was never set up is reported as, to the transport's rejections: a
/// <see cref="TimeoutException"/> (<see cref="SetupTimeouts.Handshake"/>) when its handshake did not end within
/// <c>connection-timeout</c>, or an <see cref="IOException"/> (<see cref="SetupTimeouts.Dropped"/>) whose inner exception is the
/// cause: DotNetty's <c>NotSslRecordException</c> (bytes that are not TLS), an
/// <see cref="System.Security.Authentication.AuthenticationException"/> (a handshake that failed, under an
/// <see cref="AggregateException"/>), or an <see cref="IOException"/> (the peer closed before the set-up ended).
/// Accepting that fails is reported as the <see cref="SocketException"/> it was. The fuzz target of the TLS path holds
/// every refusal to this list.
/// </remarks>
internal sealed class DotNettyListener
{
    private readonly ConnectionSettings _settings;
    private readonly MultithreadEventLoopGroup _group;
    private readonly Func<IChannel, bool> _keepOrClose;
    private readonly TimeSpan _stepBound;
    private Socket? _listening;
    private IChannel? _server;

    /// <param name="settings">Every accepted connection's settings.</param>
    /// <param name="group">The server event loops, sized by <c>server-socket-worker-pool</c>.</param>
    /// <param name="keepOrClose">Holds an accepted channel for the stack's stop, or closes it once the stack is stopping.</param>
    /// <param name="stepBound">How long stopping waits for the server channel to close itself.</param>
    public DotNettyListener(ConnectionSettings settings, MultithreadEventLoopGroup group, Func<IChannel, bool> keepOrClose, TimeSpan stepBound)
    {
        _settings = settings;
        _group = group;
        _keepOrClose = keepOrClose;
        _stepBound = stepBound;
    }

    public async Task<IPEndPoint> ListenAsync(IPEndPoint endpoint, InboundSlots? slots, Action<ITransportConnection> onInbound, Action<Exception> onRejected)
    {
        // Our own listening socket, so that StopListeningAsync can close it under the channel: see there.
        var listening = new Socket(SocketType.Stream, ProtocolType.Tcp);
        _listening = listening;
        var bootstrap = new ServerBootstrap()
            .Group(_group)
            .ChannelFactory(() => new PausingServerSocketChannel(listening, onRejected, slots))
            .Option(ChannelOption.SoBacklog, _settings.Backlog)
            .ChildHandler(new ActionChannelInitializer<IChannel>(channel =>
            {
                if (_keepOrClose(channel))
                {
                    var watch = new FirstByteWatch();
                    var connection = DotNettyPipeline.Build(channel, _settings, targetHost: null);
                    channel.Pipeline.AddFirst("first-byte", watch);
                    var name = SetupTimeouts.Inbound(channel.RemoteAddress, channel.LocalAddress);
                    _ = AnnounceWhenReadyAsync(connection, name, watch.Heard, PausingServerSocketChannel.SilentEntryOf(channel), slots?.Silent, _settings.ConnectTimeout, onInbound, onRejected);
                }
            }));
        DotNettyPipeline.ApplyChannelOptions(_settings, (option, value) => bootstrap.ChildOption(option, value), (option, value) => bootstrap.ChildOption(option, value));
        // Started on the thread pool: DotNetty's bootstrap awaits on whatever context it is called from, and one that
        // runs posted work late, or never (an actor's task scheduler, a UI or test framework's context), would hold the
        // bind with it.
        try
        {
            _server = await Task.Run(() => bootstrap.BindAsync(endpoint)).ConfigureAwait(false);
        }
        catch
        {
            // A bind that failed (a port in use) leaves the socket ours to release: a host that retries starting its
            // ActorSystem would otherwise leak one per try.
            _listening = null;
            listening.Dispose();
            throw;
        }

        return PeerEndPoints.Of(_server.LocalAddress);
    }

    /// <summary>
    /// Stops accepting, and hands on a connection accepted at that moment rather than leave it open. DotNetty's server
    /// channel, when closed, drops an accept that completed but that its event loop had not taken yet: the socket stays
    /// open and no one owns it, so its peer waits forever. Closing the listening socket instead lets the channel take
    /// such an accept (the next one fails), then close itself.
    /// </summary>
    public async Task StopListeningAsync()
    {
        if (Interlocked.Exchange(ref _server, null) is { } server)
        {
            _listening!.Dispose();
            await Task.WhenAny(server.CloseCompletion, Task.Delay(_stepBound)).ConfigureAwait(false);
            await server.CloseAsync().ConfigureAwait(false);
        }
    }

    // An accepted channel is announced once it is set up (with TLS, its handshake done); one that is not within
    // connection-timeout (a peer that never speaks, or stops halfway) is closed, as the core's listener closes it. Until
    // its first byte it counts among the silent (from its accept, by the server channel), which may close it to make room
    // for a newer one, and say so.
    private static async Task AnnounceWhenReadyAsync(
        DotNettyConnection connection, string name, Task heard, SilentInbound.Entry? waiting, SilentInbound? silent, TimeSpan bound,
        Action<ITransportConnection> onInbound, Action<Exception> onRejected)
    {
        if (waiting is not null)
        {
            _ = heard.ContinueWith(_ => silent!.Heard(waiting), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        }

        try
        {
            await connection.Ready.WaitAsync(bound).ConfigureAwait(false);
            onInbound(connection);
        }
        catch (Exception e)
        {
            connection.Abort();
            if (waiting is not { ClosedAsSilent: true })
            {
                onRejected(e is TimeoutException ? SetupTimeouts.Handshake(name, bound, e) : SetupTimeouts.Dropped(name, e));
            }
        }
    }
}
