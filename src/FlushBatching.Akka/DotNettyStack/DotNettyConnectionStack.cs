using System.Net;
using DotNetty.Transport.Channels;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Admission;

namespace FlushBatching.Akka.DotNettyStack;

/// <summary>
/// DotNetty as an <see cref="IConnectionStack"/>: a <see cref="DotNettyListener"/> and a <see cref="DotNettyConnector"/>
/// whose channels <see cref="DotNettyPipeline"/> builds, and the stop of everything they opened. Accepted channels run
/// on a group of event loops sized by <c>server-socket-worker-pool</c>, outbound ones on a group sized by
/// <c>client-socket-worker-pool</c>: as stock's, each loop runs its channels' work one task at a time, so the sizes
/// bound how many connections do I/O at once. The loops are <see cref="ThreadPoolEventLoop"/>s, which borrow the .NET
/// thread pool's threads, or DotNetty's own with a thread each, as stock's: see <see cref="EventLoopKind"/>.
/// </summary>
internal sealed class DotNettyConnectionStack : IConnectionStack
{
    // How long each step of stopping waits on an event loop: the server channel closing itself once its socket is
    // closed (one turn of its loop), channels closing. Under the transport's own bound (2 s).
    private static readonly TimeSpan StepBound = TimeSpan.FromSeconds(1);

    // How long the loops' shutdown may take after that: with the channels' step, the whole stop stays well inside the
    // transport's bound. A thread-pool loop held by a task counts as terminated then; DotNetty's own loop cannot.
    // EventLoopShutdown adds its grace (100 ms) before it ends a DotNetty loop that spins.
    private static readonly TimeSpan LoopShutdownBound = TimeSpan.FromMilliseconds(500);

    private readonly MultithreadEventLoopGroup _serverGroup;
    private readonly MultithreadEventLoopGroup _clientGroup;
    private readonly OpenSet<IChannel> _channels = new();
    private readonly DotNettyListener _listener;
    private readonly DotNettyConnector _connector;

    public DotNettyConnectionStack(ConnectionSettings settings, int serverEventLoops, int clientEventLoops, EventLoopKind loops)
    {
        Loops = loops;
        _serverGroup = Group(loops, serverEventLoops);
        _clientGroup = Group(loops, clientEventLoops);
        _listener = new DotNettyListener(settings, _serverGroup, KeepOrClose, StepBound);
        _connector = new DotNettyConnector(_clientGroup, KeepOrClose);
    }

    public string Name => "DotNetty";

    public string Description => $"DotNetty, {SettingKeys.EventLoop} = {EventLoop}";

    public string EventLoop => EventLoopKindNames.Of(Loops);

    /// <summary>What runs the event loops.</summary>
    internal EventLoopKind Loops { get; }

    /// <summary>The event loops of accepted channels, and of outbound ones.</summary>
    internal (int Server, int Client) EventLoops => (_serverGroup.Items.Count(), _clientGroup.Items.Count());

    public Task<IPEndPoint> ListenAsync(IPEndPoint endpoint, InboundSlots? slots, Action<ITransportConnection> onInbound, Action<Exception> onRejected) =>
        _listener.ListenAsync(endpoint, slots, onInbound, onRejected);

    public Task<ITransportConnection> ConnectAsync(IPEndPoint endpoint, ConnectionSettings settings) => _connector.ConnectAsync(endpoint, settings);

    /// <inheritdoc cref="DotNettyListener.StopListeningAsync"/>
    public Task StopListeningAsync() => _listener.StopListeningAsync();

    /// <summary>
    /// Closes every channel still open, then stops the event loops. A channel whose event loop stopped first would
    /// never close its socket: one accepted while the transport shut down, say, which no one had announced yet. The
    /// closes are awaited for <see cref="StepBound"/>, then the loops are stopped anyway within
    /// <see cref="LoopShutdownBound"/>: a thread-pool loop held by a task that does not return counts as terminated at
    /// that bound; one of DotNetty's own loops (<c>event-loop = dedicated</c>) that still runs then is ended as
    /// <see cref="EventLoopShutdown"/> says, and one held by a task ends only when its thread is free: the transport's
    /// bound names it and goes on.
    /// </summary>
    public async Task StopAsync()
    {
        var closing = Task.WhenAll(_channels.Close().Select(CloseQuietlyAsync));
        await Task.WhenAny(closing, Task.Delay(StepBound)).ConfigureAwait(false);
        await Task.WhenAll(
            EventLoopShutdown.ShutdownAsync(_serverGroup, LoopShutdownBound),
            EventLoopShutdown.ShutdownAsync(_clientGroup, LoopShutdownBound)).ConfigureAwait(false);
    }

    public string StillOpen
    {
        get
        {
            var open = _channels.Snapshot().Where(channel => channel.Open).Select(channel => $"channel {channel.LocalAddress} -> {channel.RemoteAddress}");
            var loops = new[] { ("server", _serverGroup), ("client", _clientGroup) }
                .Where(group => !group.Item2.TerminationCompletion.IsCompleted)
                .Select(group => $"{group.Item1} event loops not terminated");
            return string.Join(", ", open.Concat(loops));
        }
    }

    private static MultithreadEventLoopGroup Group(EventLoopKind loops, int count) => loops == EventLoopKind.Dedicated
        ? new MultithreadEventLoopGroup(count)
        : new MultithreadEventLoopGroup(static group => new ThreadPoolEventLoop(group), count);

    private static async Task CloseQuietlyAsync(IChannel channel)
    {
        try
        {
            await channel.CloseAsync().ConfigureAwait(false);
        }
        catch (Exception)
        {
            // A close that fails leaves the channel to the event loop's shutdown, which follows: shutdown goes on.
        }
    }

    // Holds a new channel until it closes, so that StopAsync closes it; once stopping, closes it at once instead.
    private bool KeepOrClose(IChannel channel)
    {
        if (_channels.TryAdd(channel, channel.CloseCompletion))
        {
            return true;
        }

        ObservedTasks.Observe(channel.CloseAsync());
        return false;
    }
}
