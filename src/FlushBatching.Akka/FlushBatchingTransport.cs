using System.Net.Sockets;
using Akka.Actor;
using Akka.Configuration;
using Akka.Event;
using Akka.Remote;
using Akka.Remote.Transport;
using FlushBatching.Diagnostics;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Admission;

namespace FlushBatching.Akka;

/// <summary>
/// The Akka.Remote transport of FlushBatching, written once over any I/O stack: addresses, listen, associate,
/// shutdown, the announcement of inbound associations, read gating and the mapping of errors. The stock DotNetty
/// transport's wire format (4-byte length prefix, same byte order and frame limit), with writes batched by count,
/// bytes and time and flushed the moment a burst ends.
/// </summary>
/// <remarks>
/// A stack is picked by naming, in <c>transport-class</c>, the subclass that gives it (the configuration page lists
/// them); a subclass gives its stack and nothing more. All read the same section with the same keys, and talk to each
/// other and to stock nodes.
/// </remarks>
public abstract class FlushBatchingTransport : Transport
{
    // Below this many inbound connections, a few strangers (or a rolling restart's reconnects) can keep a cluster's peers
    // out: the start-up line is a WARNING.
    private const int LeastInboundBound = 8;

    private readonly IConnectionStack _stack;
    private readonly TaskCompletionSource<IAssociationEventListener> _associationListener =
        new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly OpenSet<TrackedConnection> _connections = new();
    private readonly object _gate = new();
    private readonly InboundSetupLog _setupLog;
    private readonly string _address;

    private Task<bool>? _shutdownTask;
    private volatile bool _stopping;
    private volatile bool _listening;

    private protected FlushBatchingTransport(ActorSystem system, Config config, Func<BatchingTransportSettings, IConnectionStack> stack)
    {
        System = system ?? throw new ArgumentNullException(nameof(system));
        Config = config;
        Log = Logging.GetLogger(system, GetType());
        try
        {
            Settings = BatchingTransportSettings.Create(system, config);
        }
        catch (InvalidSettingException e)
        {
            // Akka.Remote reports this exception four wrappers down, under "Exception has been thrown by the target of
            // an invocation": the first ERROR line must say what is wrong.
            Log.Error(e, "FlushBatching transport cannot start: {0}", e.Message);
            throw;
        }

        SchemeIdentifier = Settings.SchemeIdentifier;

        // A Meter of its own, every measurement tagged with the address this transport is configured with: one
        // value per ActorSystem, so two systems in one process are told apart. Disposed at shutdown.
        _address = "akka." + Settings.Addressing.Configured(SchemeIdentifier, system.Name);
        Settings = Settings.WithMetrics(new FlushBatchingMetrics(new KeyValuePair<string, object?>(TransportInstruments.AddressTag, _address)));
        TransportInstruments.PublishUnsentByPeer(Settings.Connection.Metrics, _address,
            () => _connections.Snapshot().Select(tracked => (tracked.Connection, tracked.Peer, tracked.Inbound)));
        _stack = stack(Settings);
        _setupLog = new InboundSetupLog(Log, Settings.Connection.TimeProvider);
    }

    /// <summary>
    /// Reads <paramref name="section"/> as a transport reads its own at start, over the package's defaults, and throws
    /// what the transport would throw: so that a host refuses a bad value before its ActorSystem starts, with the same
    /// message. Strict where the transport is lenient: a value that a stock node starts with and the transport corrects
    /// at start with a WARNING (a <c>max-pending-writes</c> of 0, say) is refused here, since typed options are code, not a
    /// configuration carried over from stock. <c>FlushBatching.Akka.Hosting</c> checks its options through this.
    /// </summary>
    /// <exception cref="InvalidSettingException">A value is not allowed; the message names its key.</exception>
    public static void Validate(Config section) => _ = BatchingTransportSettings.Create(section, strict: true);

    /// <summary><c>tcp</c>, or <c>ssl.tcp</c> with TLS: Akka's addresses read <c>akka.tcp://system@host:port</c>.</summary>
    public override string SchemeIdentifier { get; protected set; }

    /// <summary>
    /// The largest payload a frame carries: <c>maximum-frame-size</c> less the 4-byte prefix, which is what a stock
    /// node accepts. Akka.Remote refuses larger messages at the sender with an OversizedPayloadException.
    /// </summary>
    public override long MaximumPayloadBytes => Settings.Connection.Framing.MaximumPayloadSize;

    internal BatchingTransportSettings Settings { get; }

    internal ILoggingAdapter Log { get; }

    internal IConnectionStack Stack => _stack;

    /// <inheritdoc />
    public override bool IsResponsibleFor(Address remote) => true;

    /// <inheritdoc />
    public override async Task<(Address, TaskCompletionSource<IAssociationEventListener>)> Listen()
    {
        System.Net.IPEndPoint bound;
        try
        {
            var endpoint = await Settings.Addressing.BindEndPointAsync().ConfigureAwait(false);
            var slots = InboundSlots.For(Settings.Connection);
            bound = await _stack.ListenAsync(endpoint, slots, OnInbound, OnRejected).ConfigureAwait(false);
            LogInboundBound(slots);
        }
        catch (Exception e) when (e is SocketException or AggregateException)
        {
            var reason = $"Failed to bind to [{Settings.Addressing.Hostname}:{Settings.Addressing.Port}]: {e.GetBaseException().Message}";
            Log.Error(e, "FlushBatching transport cannot start: {0}", reason);
            throw new RemoteTransportException(reason, e);
        }

        _listening = true;
        var address = Settings.Addressing.ListenAddress(SchemeIdentifier, System.Name, bound);
        TransportInstruments.PublishListening(Settings.Connection.Metrics, "akka." + address, _stack);
        Log.Info("FlushBatching transport listening on akka.{0} ({1}, {2}); {3}", address, bound, _stack.Description, Settings);
        return (address, _associationListener);
    }

    // The bound on inbound connections, said once at start with where it came from; a WARNING when it is too small for
    // a cluster's peers to get in beside a few strangers.
    private void LogInboundBound(InboundSlots? slots)
    {
        if (slots is null)
        {
            Log.Info("FlushBatching transport: inbound connections unbounded ({0} = unbounded, or no descriptor limit to derive one from)", SettingKeys.MaxInboundConnections);
        }
        else if (slots.Bound < LeastInboundBound)
        {
            Log.Warning(
                "FlushBatching transport: at most {0} inbound connection(s) ({1}), too few to serve a cluster: raise the descriptor limit (ulimit -n) or set {2}",
                slots.Bound, slots.How, SettingKeys.MaxInboundConnections);
        }
        else
        {
            Log.Info("FlushBatching transport: at most {0} inbound connections ({1}), at most {2} of them silent", slots.Bound, slots.How, slots.Silent.Bound);
        }
    }

    /// <inheritdoc />
    /// <exception cref="InvalidAssociationException">The peer refused, did not answer within <c>connection-timeout</c>, or failed the TLS handshake.</exception>
    public override async Task<AssociationHandle> Associate(Address remoteAddress)
    {
        ArgumentNullException.ThrowIfNull(remoteAddress);
        if (_stopping || !_listening)
        {
            throw new InvalidAssociationException($"Cannot associate with {remoteAddress}: the transport is {(_stopping ? "shut down" : "not listening")}.");
        }

        ITransportConnection connection;
        try
        {
            var endpoint = await Settings.Addressing.ConnectableEndPointAsync(remoteAddress).ConfigureAwait(false);
            connection = await _stack.ConnectAsync(endpoint, Settings.ConnectionTo(remoteAddress)).ConfigureAwait(false);
        }
        catch (Exception e) when (e is not InvalidAssociationException)
        {
            var cause = e is AggregateException { InnerException: { } inner } ? inner : e;
            throw new InvalidAssociationException($"Failed to associate with {remoteAddress}: {cause.Message}", cause);
        }

        return Track(connection, remoteAddress, inbound: false) ?? throw new InvalidAssociationException(
            $"Cannot associate with {remoteAddress}: the transport shut down while connecting.");
    }

    /// <summary>
    /// Stops listening, closes every connection, and stops the stack, each step bounded: nothing a peer does (or fails to
    /// do) holds it past <see cref="ShutdownGrace"/> and three times <see cref="LetGoBound"/> (6.5 s at most).
    /// </summary>
    /// <remarks>
    /// Akka.Remote calls this only after it has given every endpoint <c>akka.remote.flush-wait-on-shutdown</c> to flush,
    /// so a connection still sending by then gets <see cref="ShutdownGrace"/> more, enough for a peer that reads to take
    /// what is queued; then it is aborted, its socket closed and its buffers returned, as stock closes its channels.
    /// A step that outlasts its bound is logged, naming what is still open, and shutdown goes on: the stack is stopped
    /// whatever happened before. Safe to call more than once: later calls return the first call's task.
    /// </remarks>
    public override Task<bool> Shutdown()
    {
        lock (_gate)
        {
            return _shutdownTask ??= ShutdownOnceAsync();
        }
    }

    /// <summary>How long connections still sending at shutdown have left to finish: 0.5 s, or the close bound if shorter.</summary>
    internal TimeSpan ShutdownGrace => Settings.Connection.CloseTimeout < MaxShutdownGrace ? Settings.Connection.CloseTimeout : MaxShutdownGrace;

    /// <summary>How long shutdown waits on a step that should be quick (aborted connections releasing their sockets, the
    /// stack stopping, the listener closing) before it logs what is still open and goes on.</summary>
    internal static TimeSpan LetGoBound { get; } = TimeSpan.FromSeconds(2);

    internal static TimeSpan MaxShutdownGrace { get; } = TimeSpan.FromMilliseconds(500);

    private async Task<bool> ShutdownOnceAsync()
    {
        _stopping = true;
        var clock = Settings.Connection.TimeProvider;
        var started = clock.GetTimestamp();
        var clean = true;
        int closedCount = 0, abortedCount = 0;
        long unsent = 0;
        try
        {
            clean &= await WithinAsync(_stack.StopListeningAsync(), LetGoBound, "stop listening", () => "the listener").ConfigureAwait(false);
            var open = _connections.Close().Select(tracked => tracked.Connection).ToList();
            foreach (var connection in open)
            {
                _ = connection.CloseAsync();
            }

            var closed = Task.WhenAll(open.Select(connection => connection.Completion));
            if (!await EndsWithinAsync(closed, ShutdownGrace).ConfigureAwait(false))
            {
                // Only frames left unsent make the shutdown unclean (Akka.Remote then warns that messages may have been
                // dropped); a peer that has read everything and not yet closed its side loses nothing.
                foreach (var connection in open.Where(connection => !connection.Completion.IsCompleted))
                {
                    unsent += connection.UnsentBytes;
                    abortedCount++;
                    connection.Abort();
                }

                clean &= unsent == 0;

                await WithinAsync(closed, LetGoBound, "release aborted connections",
                    () => string.Join(", ", open.Where(connection => !connection.Completion.IsCompleted))).ConfigureAwait(false);
            }

            closedCount = open.Count - abortedCount;
        }
        finally
        {
            clean &= await WithinAsync(_stack.StopAsync(), LetGoBound, $"stop the {_stack.Name} stack", () => _stack.StillOpen).ConfigureAwait(false);
            _setupLog.Stop();
            Settings.Connection.Tls?.ReleaseOwned();
            Settings.Connection.Metrics.Dispose();
            Log.Info("FlushBatching transport shut down in {0}: {1} connection(s) closed, {2} aborted after {3} with {4} bytes unsent",
                SettingText.FormatDuration(TimeSpan.FromMilliseconds(Math.Round(clock.GetElapsedTime(started).TotalMilliseconds))),
                closedCount, abortedCount, SettingText.FormatDuration(ShutdownGrace), unsent);
        }

        return clean;
    }

    // Awaits a shutdown step for at most its bound; past it, one WARNING names the step and what is still open.
    private async Task<bool> WithinAsync(Task step, TimeSpan bound, string what, Func<string> stillOpen)
    {
        if (await EndsWithinAsync(step, bound).ConfigureAwait(false))
        {
            return true;
        }

        Log.Warning("FlushBatching transport shutdown: did not {0} within {1}; going on with still open: {2}",
            what, SettingText.FormatDuration(bound), stillOpen());
        return false;
    }

    // True when the task ended (however) within the bound; its exception, if any, is observed here.
    private async Task<bool> EndsWithinAsync(Task task, TimeSpan bound)
    {
        try
        {
            await task.WaitAsync(bound, Settings.Connection.TimeProvider).ConfigureAwait(false);
        }
        catch (TimeoutException) when (!task.IsCompleted)
        {
            ObservedTasks.Observe(task);
            return false;
        }
        catch (Exception e)
        {
            Log.Debug("FlushBatching transport shutdown: a step ended on an error: {0}", e.Message);
        }

        return true;
    }

    private void OnInbound(ITransportConnection connection)
    {
        // Tracked at once, so that shutdown closes it even if it is never announced.
        var remote = AkkaAddressing.PeerAddress(SchemeIdentifier, System.Name, connection.RemoteEndPoint);
        if (Track(connection, remote, inbound: true) is { } handle)
        {
            // A peer that connects and never speaks holds a connection for nothing: it gets connection-timeout.
            handle.CloseUnlessHeardWithin(Settings.Connection.ConnectTimeout, Settings.Connection.TimeProvider, _setupLog);
            _ = AnnounceAsync(handle);
        }
    }

    private async Task AnnounceAsync(BatchingAssociationHandle handle)
    {
        // Accepted connections wait here until Remoting has said who hears of them.
        var listener = await _associationListener.Task.ConfigureAwait(false);
        listener.Notify(new InboundAssociation(handle));
    }

    // Null once shutdown has taken the connections to close: this one is aborted, and no handle is made for it.
    private BatchingAssociationHandle? Track(ITransportConnection connection, Address remote, bool inbound)
    {
        if (!_connections.TryAdd(new TrackedConnection(connection, connection.RemoteEndPoint, inbound), connection.Completion))
        {
            connection.Abort();
            return null;
        }

        var local = Settings.Addressing.LocalAddress(SchemeIdentifier, System.Name, connection.LocalEndPoint);
        return new BatchingAssociationHandle(local, remote, connection, Log);
    }

    private void OnRejected(Exception reason) => _setupLog.Dropped(reason);

    // A connection this transport holds until it ends, its peer's end, and who opened it.
    private sealed record TrackedConnection(ITransportConnection Connection, System.Net.IPEndPoint Peer, bool Inbound);
}
