using System.Net;
using System.Net.Sockets;
using FlushBatching.Framing;
using FlushBatching.Tcp.Io;
using FlushBatching.Tcp.Loops;

namespace FlushBatching.Tcp;

/// <summary>
/// A TCP connection that carries length-prefixed frames and batches its writes: <see cref="TryWrite"/> from
/// any thread appends a frame to a queue, and one send loop sends whatever is queued in gathered sends,
/// flushing by count, bytes, time, or the moment the burst ends.
/// </summary>
/// <remarks>
/// <para>
/// The work is split as Kestrel's socket transport splits it: a write queue (pooled chunks, one copy of each payload,
/// back-pressure), a send loop that flushes by the <see cref="Batching.BatchingSettings"/> and sends each batch in one gathered
/// send, and a receive side that fills a pipe from the socket and delivers frames to the <see cref="IFrameHandler"/>
/// given to <see cref="Start"/>. Until then inbound frames wait, and TCP flow control pushes back on the peer. This
/// class owns their lifetime.
/// </para>
/// <para>
/// Every ending (local close or abort, the peer closing, a socket error, a bad frame, a close past its bound) goes
/// through one shutdown path; the handler hears of it once, after the last frame. A close is graceful only within
/// <see cref="ConnectionSettings.CloseTimeout"/>: a peer that has stopped reading cannot hold the connection longer.
/// </para>
/// </remarks>
public sealed class FramedConnection : IAsyncDisposable
{
    private readonly ConnectionIo _io;
    private readonly FrameWriteQueue _queue;
    private readonly FrameSender _sender;
    private readonly FrameReceiver _receiver;
    private readonly TaskCompletionSource _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private Task _sending = Task.CompletedTask;
    private Task<Exception?> _receiving = Task.FromResult<Exception?>(null);
    private readonly CloseDeadline _closeDeadline;
    private IFrameHandler? _handler;
    // Whether the connection has ended (Shutdown ran): once, and the first reason wins. The write queue's own "closed"
    // follows from it, or comes first when the send loop ends after a graceful close.
    private int _shutdown;
    private Exception? _closeReason;

    private FramedConnection(Socket socket, ConnectionIo io, ConnectionSettings settings, Action? heard)
    {
        _io = io;
        Settings = settings;
        _queue = new FrameWriteQueue(settings);
        _sender = new FrameSender(io, _queue, settings);
        _receiver = new FrameReceiver(io, settings, heard);
        _closeDeadline = new CloseDeadline(settings, OnCloseDeadline);
        LocalEndPoint = PeerEndPoints.Of(socket.LocalEndPoint!);
        RemoteEndPoint = PeerEndPoints.Of(socket.RemoteEndPoint!);
    }

    /// <summary>The local end of the connection.</summary>
    public IPEndPoint LocalEndPoint { get; }

    /// <summary>The remote end of the connection.</summary>
    public IPEndPoint RemoteEndPoint { get; }

    /// <summary>The settings the connection was made with.</summary>
    public ConnectionSettings Settings { get; }

    /// <summary>
    /// Whether <see cref="TryWrite"/> takes writes: <c>false</c> from when unsent bytes pass
    /// <see cref="ConnectionSettings.WriteBufferHighWaterMark"/> until they fall to the low-water mark, and
    /// after the connection is closing.
    /// </summary>
    public bool IsWritable => _queue.IsWritable;

    /// <summary>Unsent bytes above which writes are refused now: set, or following the connection's rate.</summary>
    internal long HighWaterMark => _queue.HighWaterMark;

    /// <summary>
    /// Whether the connection is closing or has ended: <see cref="TryWrite"/> refuses from then on, for good, and
    /// <see cref="WhenWritableAsync"/> completes at once. A back-pressure loop checks it after a refused write, or it
    /// would spin.
    /// </summary>
    public bool IsClosing => _queue.IsClosing;

    /// <summary>Bytes written but not yet handed to the socket.</summary>
    public long UnsentBytes => _queue.UnsentBytes;

    /// <summary>Completes when the connection has ended and its socket is released.</summary>
    public Task Completion => _completion.Task;

    /// <summary>What ended the connection: <c>null</c> while open and after an orderly close.</summary>
    public Exception? CloseReason => Volatile.Read(ref _closeReason);

    internal bool HasEnded => Volatile.Read(ref _shutdown) != 0;

    /// <summary>
    /// Queues one frame carrying <paramref name="payload"/>. Thread-safe, never blocks, and keeps the order of
    /// writes made from one thread (and of writes ordered by the caller across threads).
    /// </summary>
    /// <returns>
    /// <c>true</c> when the frame is queued; <c>false</c> when nothing was queued, for one of two reasons. Above the
    /// high-water mark: try again once <see cref="WhenWritableAsync"/> completes. Closing or ended (<see cref="IsClosing"/>):
    /// no write will be taken again, and <see cref="WhenWritableAsync"/> completes at once, so a loop that only awaits it
    /// spins.
    /// </returns>
    /// <exception cref="ArgumentException">The payload does not fit in a frame; the message names its size and the limit.</exception>
    public bool TryWrite(ReadOnlySpan<byte> payload)
    {
        FrameEncoder.EnsurePayloadFits(payload.Length, Settings.Framing);
        if (!_queue.TryWrite(payload, out var wake))
        {
            return false;
        }

        if (wake)
        {
            _sender.Wake();
        }

        return true;
    }

    /// <summary>Completes when <see cref="TryWrite"/> takes writes again, or at once when the connection is closing or has ended (<see cref="IsClosing"/>).</summary>
    public Task WhenWritableAsync(CancellationToken cancellationToken = default) => _queue.WhenWritableAsync(cancellationToken);

    /// <summary>
    /// Starts delivering inbound frames to <paramref name="handler"/>, in order, beginning with any that
    /// arrived before this call; then <see cref="IFrameHandler.OnClosed"/> once when the connection ends.
    /// </summary>
    /// <exception cref="InvalidOperationException">A handler was already registered.</exception>
    public void Start(IFrameHandler handler)
    {
        ArgumentNullException.ThrowIfNull(handler);
        if (Interlocked.CompareExchange(ref _handler, handler, null) is not null)
        {
            throw new InvalidOperationException("This connection already has a frame handler.");
        }

        _ = Task.Run(() => DeliverAsync(handler));
    }

    /// <summary>
    /// Closes gracefully within <see cref="ConnectionSettings.CloseTimeout"/> (2 seconds by default) of this call:
    /// sends everything already written, ends our side of the stream and waits for the peer to end its own, so a peer
    /// that reads gets every byte. Past the bound the connection is aborted: a peer that stopped reading holds neither
    /// the socket nor the buffers of what it did not read, and the handler is told with a <see cref="TimeoutException"/>
    /// when frames were left unsent. Writes after this call are refused; later calls change nothing.
    /// </summary>
    /// <returns><see cref="Completion"/>.</returns>
    public Task CloseAsync()
    {
        if (_queue.RequestClose(out var wake))
        {
            // Whatever the peer does, the connection ends within the bound.
            _closeDeadline.Arm(() => HasEnded);
            if (wake)
            {
                _sender.Wake();
            }
        }

        return Completion;
    }

    /// <summary>Closes at once: frames not yet sent are dropped and their buffers returned.</summary>
    /// <param name="reason">What the handler is told ended the connection; <c>null</c> for an orderly end.</param>
    public void Abort(Exception? reason = null) => Shutdown(reason);

    /// <summary>Aborts the connection and waits until its socket is released.</summary>
    public async ValueTask DisposeAsync()
    {
        Abort();
        await Completion.ConfigureAwait(false);
    }

    /// <inheritdoc />
    public override string ToString() => PeerEndPoints.Describe(LocalEndPoint, RemoteEndPoint);

    /// <summary>A connection over <paramref name="io"/>, its send and receive loops running.</summary>
    /// <param name="socket">The connected socket.</param>
    /// <param name="io">What sends and receives on it: the socket, or TLS over it.</param>
    /// <param name="settings">The connection's settings.</param>
    /// <param name="heard">Called once, when the first bytes from the peer arrive, whether a handler reads them yet or not.</param>
    internal static FramedConnection Open(Socket socket, ConnectionIo io, ConnectionSettings settings, Action? heard = null)
    {
        var connection = new FramedConnection(socket, io, settings, heard);
        connection._receiving = connection.ReceiveAsync();
        connection._sending = connection.SendAsync();
        return connection;
    }

    // An error loses what is buffered anyway, so it ends the connection now, handler or not; a clean end of stream
    // waits for the handler to read every frame before it.
    private async Task<Exception?> ReceiveAsync()
    {
        var error = await _receiver.ReceiveFromPeerAsync().ConfigureAwait(false);
        if (error is not null)
        {
            Shutdown(error);
        }

        return error;
    }

    private async Task SendAsync()
    {
        try
        {
            await _sender.SendToPeerAsync().ConfigureAwait(false);
            if (_queue.IsCloseRequested && !HasEnded)
            {
                // The close's deadline bounds this wait for the peer's end as it bounded the sends before it.
                await _io.ShutdownSendAsync().ConfigureAwait(false);
                await _receiving.ConfigureAwait(false);
                Shutdown(null);
            }
        }
        catch (Exception e)
        {
            Shutdown(e);
        }
    }

    private async Task DeliverAsync(IFrameHandler handler)
    {
        var error = await _receiver.DeliverToHandlerAsync(this, handler).ConfigureAwait(false);
        Shutdown(error);
        await Completion.ConfigureAwait(false);
        handler.OnClosed(this, CloseReason);
    }

    // The one way a connection ends. The first reason wins; every later call is a no-op.
    private void Shutdown(Exception? reason)
    {
        if (Interlocked.Exchange(ref _shutdown, 1) != 0)
        {
            return;
        }

        Volatile.Write(ref _closeReason, reason);

        // First: no frame is delivered once the connection has ended.
        _receiver.Cancel();
        _closeDeadline.Disarm();
        _queue.Close();
        _io.Dispose();
        _sender.WakeToStop();
        _ = CompleteWhenLoopsEndAsync();
    }

    // Past the close's bound: what is still queued was not read by the peer.
    private void OnCloseDeadline() => Shutdown(_closeDeadline.AbortReason(this, _queue.UnsentBytes));

    // The loops report their own errors through Shutdown; here only their end matters, and no exception may be
    // left to surface as an unobserved task exception.
    private async Task CompleteWhenLoopsEndAsync()
    {
        await Task.WhenAll(_sending, _receiving).ContinueWith(static _ => { }, TaskScheduler.Default).ConfigureAwait(false);
        _completion.TrySetResult();
    }
}
