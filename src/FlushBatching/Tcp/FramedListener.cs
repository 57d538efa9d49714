using System.Net;
using System.Net.Sockets;
using FlushBatching.Tcp.Admission;
using FlushBatching.Tcp.Io;

namespace FlushBatching.Tcp;

/// <summary>
/// Accepts framed connections on a local endpoint and announces each one, after its TLS handshake if TLS is
/// configured. A connection that fails to set up is reported and dropped; the listener keeps accepting.
/// </summary>
/// <remarks>
/// When accepting itself fails, the listener goes on as <see cref="AcceptPause"/> says: at once after a peer that
/// reset before it was taken, after a reported pause otherwise. With
/// <see cref="ConnectionSettings.MaxInboundConnections"/> connections open (by default, what the process's descriptor
/// limit leaves after a reserve), it stops accepting, reports it once, and goes on when one of them ends.
/// </remarks>
public sealed class FramedListener : IAsyncDisposable
{
    private readonly Socket _socket;
    private readonly ConnectionSettings _settings;
    private readonly Action<FramedConnection> _onConnection;
    private readonly Action<Exception>? _onRejected;
    private readonly CancellationTokenSource _stopping = new();
    private readonly TaskCompletionSource _setUpsEnded = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly InboundSlots? _slots;
    private readonly Task _acceptLoop;
    private int _settingUp;

    private FramedListener(Socket socket, ConnectionSettings settings, InboundSlots? slots, Action<FramedConnection> onConnection, Action<Exception>? onRejected)
    {
        _socket = socket;
        _settings = settings;
        _onConnection = onConnection;
        _onRejected = onRejected;
        LocalEndPoint = PeerEndPoints.Of(socket.LocalEndPoint!);
        _slots = slots;
        _acceptLoop = AcceptLoopAsync();
    }

    /// <summary>The bound endpoint; its port is the one the system chose when port 0 was asked for.</summary>
    public IPEndPoint LocalEndPoint { get; }

    /// <summary>Accepted sockets whose set-up (the TLS handshake) has not ended: a test waits on it instead of a delay.</summary>
    internal int SettingUp => Volatile.Read(ref _settingUp);

    /// <summary>Binds <paramref name="endpoint"/> and starts accepting.</summary>
    /// <param name="endpoint">Where to listen; port 0 lets the system choose.</param>
    /// <param name="settings">Settings for every accepted connection, and the backlog.</param>
    /// <param name="onConnection">Called with each new connection, which waits for <see cref="FramedConnection.Start"/>.</param>
    /// <param name="onRejected">Called when an accepted socket could not become a connection (a failed TLS handshake, say), with the reason.</param>
    /// <exception cref="SocketException">The endpoint cannot be bound.</exception>
    public static FramedListener Start(IPEndPoint endpoint, ConnectionSettings settings, Action<FramedConnection> onConnection, Action<Exception>? onRejected = null)
    {
        ArgumentNullException.ThrowIfNull(settings);
        return Start(endpoint, settings, InboundSlots.For(settings), onConnection, onRejected);
    }

    /// <summary>
    /// As <see cref="Start(IPEndPoint, ConnectionSettings, Action{FramedConnection}, Action{Exception}?)"/>, with the
    /// bound on inbound connections given: a host that bounds something else by the same figure (the Akka adapter's
    /// unheard connections) derives it once.
    /// </summary>
    /// <param name="endpoint">Where to listen; port 0 lets the system choose.</param>
    /// <param name="settings">Settings for every accepted connection, and the backlog.</param>
    /// <param name="slots">The bound on open inbound connections, or <c>null</c> for none.</param>
    /// <param name="onConnection">Called with each new connection.</param>
    /// <param name="onRejected">Called when an accepted socket could not become a connection, with the reason.</param>
    internal static FramedListener Start(IPEndPoint endpoint, ConnectionSettings settings, InboundSlots? slots, Action<FramedConnection> onConnection, Action<Exception>? onRejected)
    {
        ArgumentNullException.ThrowIfNull(endpoint);
        ArgumentNullException.ThrowIfNull(settings);
        ArgumentNullException.ThrowIfNull(onConnection);
        if (settings.Tls is { HasCertificate: false })
        {
            throw new ArgumentException("A TLS listener needs TlsSettings.Certificate, with its private key.", nameof(settings));
        }

        var socket = new Socket(endpoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            // The IPv6 any address listens on IPv4 too, as a DotNetty listener's dual-mode socket (stock's) does: .NET
            // makes an IPv6 socket IPv6-only unless told.
            if (endpoint.Address.Equals(IPAddress.IPv6Any))
            {
                socket.DualMode = true;
            }

            socket.Bind(endpoint);
            socket.Listen(settings.Backlog);
        }
        catch
        {
            socket.Dispose();
            throw;
        }

        return new FramedListener(socket, settings, slots, onConnection, onRejected);
    }

    /// <summary>
    /// Stops accepting. Connections already announced stay open; they are their owners' to close. One still setting up
    /// (its TLS handshake under way) is closed, not announced, and this completes once every set-up has ended: nothing
    /// is announced after it.
    /// </summary>
    public async ValueTask DisposeAsync()
    {
        if (_stopping.IsCancellationRequested)
        {
            return;
        }

        await _stopping.CancelAsync().ConfigureAwait(false);
        _socket.Dispose();
        await _acceptLoop.ConfigureAwait(false);

        // A set-up ending after the stop began completes this itself; one that ended before it left the count at 0.
        if (Volatile.Read(ref _settingUp) == 0)
        {
            _setUpsEnded.TrySetResult();
        }

        await _setUpsEnded.Task.ConfigureAwait(false);

        // _stopping is not disposed: set-ups still under way link to its token, and with no timer it holds nothing.
    }

    private async Task AcceptLoopAsync()
    {
        while (!_stopping.IsCancellationRequested)
        {
            if (_slots is not null && !(await TrimSilentAsync(_slots.Silent).ConfigureAwait(false) && await TakeSlotAsync(_slots).ConfigureAwait(false)))
            {
                return;
            }

            Socket accepted;
            try
            {
                accepted = await _socket.AcceptAsync(_stopping.Token).ConfigureAwait(false);
            }
            catch (Exception) when (_stopping.IsCancellationRequested)
            {
                _slots?.Release();
                return;
            }
            catch (SocketException e) when (AcceptPause.IsPeerGone(e.SocketErrorCode))
            {
                // The peer gave up before its connection was taken: nothing wrong here, the next one may be fine.
                _slots?.Release();
                continue;
            }
            catch (SocketException e)
            {
                _slots?.Release();
                _onRejected?.Invoke(AcceptPause.Report(LocalEndPoint, $"{e.SocketErrorCode} ({e.Message})", e));
                try
                {
                    await Task.Delay(AcceptPause.Duration, _settings.TimeProvider, _stopping.Token).ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                    return;
                }

                continue;
            }

            Interlocked.Increment(ref _settingUp);
            _ = SetUpAsync(accepted);
        }
    }

    // A slot for the next accept: at once when one is free; else, reported once, when a connection ends. False when the
    // listener stops meanwhile.
    private async Task<bool> TakeSlotAsync(InboundSlots slots)
    {
        if (slots.TryTake())
        {
            return true;
        }

        _onRejected?.Invoke(slots.Paused(LocalEndPoint));
        try
        {
            await slots.TakeAsync(_stopping.Token).ConfigureAwait(false);
            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }

    // No more silent than their bound before the next accept: at once, or once the oldest of them has been silent for
    // the grace. False when the listener stops meanwhile.
    private async Task<bool> TrimSilentAsync(SilentInbound silent)
    {
        while (!silent.TryTrim(out var wait))
        {
            try
            {
                await Task.Delay(wait, _settings.TimeProvider, _stopping.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                return false;
            }
        }

        return true;
    }

    private async Task SetUpAsync(Socket socket)
    {
        var remote = socket.RemoteEndPoint;
        FramedConnection? connection = null;
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(_stopping.Token);
        var silent = _slots?.Silent;

        // Silent from its accept until its first byte; closed meanwhile to make room for a newer connection, it is said
        // here, once, and its set-up cancelled or, once open, the connection aborted.
        var waiting = silent?.Add(() =>
        {
            _onRejected?.Invoke(silent.Closed(remote, LocalEndPoint));
            CancelQuietly(timeout);
            Volatile.Read(ref connection)?.Abort();
        });
        try
        {
            SocketOptions.Of(_settings).ApplyTo(socket);
            timeout.CancelAfter(_settings.ConnectTimeout);
            if (waiting is not null && _settings.Tls is not null)
            {
                // A TLS client speaks first, its ClientHello: waited for without taking it (a receive of no bytes completes
                // once one has arrived, or the peer closed, which the handshake then finds).
                await socket.ReceiveAsync(Memory<byte>.Empty, SocketFlags.None, timeout.Token).ConfigureAwait(false);
                silent!.Heard(waiting);
            }

            var io = await SocketSetup.CreateIoAsync(socket, _settings, serverName: null, timeout.Token).ConfigureAwait(false);
            Volatile.Write(ref connection, FramedConnection.Open(socket, io, _settings, waiting is null ? null : () => silent!.Heard(waiting)));
            if (_slots is not null)
            {
                // From here the slot is the connection's: given back when it ends, however it ends.
                _slots.ReleaseWhen(connection.Completion);
                _ = connection.Completion.ContinueWith(_ => silent!.Heard(waiting!), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
            }

            if (_stopping.IsCancellationRequested || waiting is { ClosedAsSilent: true })
            {
                connection.Abort();
                return;
            }

            _onConnection(connection);
        }
        catch (OperationCanceledException) when (connection is null && waiting is { ClosedAsSilent: true })
        {
            socket.Dispose();
            _slots!.Release();
        }
        catch (OperationCanceledException e) when (connection is null && !_stopping.IsCancellationRequested)
        {
            socket.Dispose();
            _slots?.Release();
            _onRejected?.Invoke(SetupTimeouts.Handshake(SetupTimeouts.Inbound(remote, LocalEndPoint), _settings.ConnectTimeout, e));
        }
        catch (Exception e)
        {
            if (connection is null)
            {
                socket.Dispose();
                _slots?.Release();
            }
            else
            {
                connection.Abort(e);
            }

            _onRejected?.Invoke(SetupTimeouts.Dropped(SetupTimeouts.Inbound(remote, LocalEndPoint), e));
        }
        finally
        {
            if (waiting is not null && connection is null)
            {
                silent!.Heard(waiting);
            }

            if (Interlocked.Decrement(ref _settingUp) == 0 && _stopping.IsCancellationRequested)
            {
                _setUpsEnded.TrySetResult();
            }
        }
    }

    private static void CancelQuietly(CancellationTokenSource source)
    {
        try
        {
            source.Cancel();
        }
        catch (ObjectDisposedException)
        {
            // The set-up ended meanwhile.
        }
    }
}
