using System.Globalization;
using System.Net;
using DotNetty.Common.Concurrency;
using DotNetty.Transport.Channels;
using FlushBatching.DotNetty;
using FlushBatching.Framing;
using FlushBatching.Tcp;
using Google.Protobuf;

namespace FlushBatching.Akka;

/// <summary>
/// A DotNetty channel as the adapter's <see cref="ITransportConnection"/>. <see cref="TryWrite"/> puts Akka's payload
/// (an immutable ByteString, not a copy) on a <see cref="DotNettyWriteQueue"/> and, only when no hand-off is due,
/// schedules one on the channel's event loop; the hand-off hands each payload to the pipeline's
/// <see cref="DotNettyPipelineTail"/>, and <c>BatchingWriterHandler</c> writes its length prefix, combines small frames
/// with one copy, passes large ones through and decides the flushes.
/// </summary>
/// <remarks>
/// <para>
/// Reads stay off until the adapter calls <see cref="StartReading"/>, but for one read at once on an accepted channel,
/// which tells that the peer has spoken (<see cref="FirstByteWatch"/>); what that read and TLS's handshake bring before
/// reading starts is held by the tail.
/// </para>
/// <para>
/// Work goes to the event loop as a <see cref="LoopTask"/>: a loop shuts down only when the transport stops, after it
/// closed its channels, but a task can still reach it as it terminates, and DotNetty's loop then never runs it. A hand-off
/// or a close lost so ends the connection for its reader, naming the bytes it accepted and did not send, and refuses every
/// later write (the write that asked for it too, when the loop had terminated already); a read start lost so is answered
/// with the end. A close is graceful within <see cref="ConnectionSettings.CloseTimeout"/>, then aborted, as the core's
/// connections close.
/// </para>
/// <para>
/// Writes and the start of a close are linearizable, as the core's are: one lock orders each write's check, queueing and
/// hand-off request against the close's mark, so a write either is refused or is queued before the close's own
/// hand-off, which sends it. A hand-off the event loop refuses refuses its write and every later one.
/// </para>
/// </remarks>
internal sealed class DotNettyConnection : ITransportConnection
{
    private static readonly Action<object> HandOffTask = static state => ((DotNettyConnection)state).HandOff();
    private static readonly Action<object> CloseTask = static state => ((DotNettyConnection)state).HandOffThenClose();
    private static readonly Action<object> HandOffLost = static state => ((DotNettyConnection)state).EndWithoutLoop("a hand-off of its writes");
    private static readonly Action<object> AbortTask = static state => ObservedTasks.Observe(((DotNettyConnection)state)._channel.CloseAsync());
    private static readonly Action<object> CloseLost = static state => ((DotNettyConnection)state).EndWithoutLoop("its close", orderlyIfAllSent: true);

    private readonly IChannel _channel;
    private readonly ConnectionSettings _settings;
    private readonly FramingSettings _framing;
    private readonly Diagnostics.FlushBatchingMetrics _metrics;
    private readonly DotNettyWriteQueue _queue;
    private readonly object _gate = new();
    private ITimer? _closeDeadline;

    // Read and set under _gate only.
    private bool _closing;

    /// <param name="channel">The channel, its pipeline not built yet.</param>
    /// <param name="settings">The connection's settings.</param>
    /// <param name="judge">With TLS, what judges the peer's certificate in the handshake; <c>null</c> without.</param>
    public DotNettyConnection(IChannel channel, ConnectionSettings settings, PeerJudge? judge)
    {
        _channel = channel;
        _settings = settings;
        _framing = settings.Framing;
        _metrics = settings.Metrics;
        _queue = new DotNettyWriteQueue(settings.TimeProvider, settings.Metrics);
        Tail = new DotNettyPipelineTail(settings, judge, OnEnded);
    }

    /// <summary>The handler to put last in the channel's pipeline.</summary>
    public DotNettyPipelineTail Tail { get; }

    /// <summary>Completes once the connection (and its TLS handshake) is up; fails if it ends before.</summary>
    public Task Ready => Tail.Ready;

    public IPEndPoint LocalEndPoint => Unmapped(_channel.LocalAddress);

    public IPEndPoint RemoteEndPoint => Unmapped(_channel.RemoteAddress);

    public Task Completion => _channel.CloseCompletion;

    /// <summary>Bytes accepted and not yet on the wire: queued for the event loop, or in the channel's outbound buffer.</summary>
    public long UnsentBytes => _queue.QueuedBytes + (_channel.Unsafe.OutboundBuffer?.TotalPendingWriteBytes() ?? 0);

    /// <summary>Unsent bytes above which the channel turns unwritable now; tests read it.</summary>
    internal long HighWaterMark => _channel.Configuration.WriteBufferHighWaterMark;

    /// <summary>The event loop the channel runs on; tests hold it busy.</summary>
    internal IEventLoop EventLoop => _channel.EventLoop;

    public bool TryWrite(ByteString payload)
    {
        FrameEncoder.EnsurePayloadFits(payload.Length, _framing);
        lock (_gate)
        {
            if (_closing || !_channel.Open)
            {
                return false;
            }

            // Unsent bytes are those queued here for the event loop and those in the channel's outbound buffer: a write
            // is refused once they pass the high-water mark, even while a busy event loop has not taken the queue.
            var room = _channel.IsWritable ? _channel.Unsafe.OutboundBuffer?.BytesBeforeUnwritable() ?? 0 : -1;
            switch (_queue.TryEnqueue(payload, room))
            {
                case DotNettyWriteQueue.Outcome.Refused:
                    _metrics.RecordRefused();
                    return false;
                case DotNettyWriteQueue.Outcome.QueuedHandOffNeeded:
                    LoopTask.Execute(_channel.EventLoop, HandOffTask, HandOffLost, this);

                    // On a loop terminated already, the hand-off's fallback has just ended the connection: this write is
                    // refused with the rest.
                    return !_closing;
            }

            return true;
        }
    }

    public void StartReading(IPayloadReceiver receiver)
    {
        LoopTask.Execute(
            _channel.EventLoop,
            state => ((DotNettyConnection)state).Tail.StartReading(_channel, receiver),
            state => ((DotNettyConnection)state).EndWithoutLoop("the start of its reads", receiver),
            this);
    }

    /// <summary>
    /// Refuses writes from now on, writes and flushes what is queued, and closes once the last write is on the wire, or
    /// aborts at <see cref="ConnectionSettings.CloseTimeout"/> from this call, whichever comes first.
    /// </summary>
    public Task CloseAsync()
    {
        bool first;
        lock (_gate)
        {
            first = !_closing;
            _closing = true;
        }

        if (first && _channel.Open)
        {
            Volatile.Write(ref _closeDeadline, _settings.TimeProvider.CreateTimer(
                static state => ((DotNettyConnection)state!).OnCloseDeadline(), this, _settings.CloseTimeout, Timeout.InfiniteTimeSpan));
            if (!_channel.Open)
            {
                DisposeCloseDeadline();
            }

            LoopTask.Execute(_channel.EventLoop, CloseTask, CloseLost, this);
        }

        return Completion;
    }

    /// <summary>Closes the channel at once; what it has not sent is dropped and its buffers released.</summary>
    public void Abort()
    {
        lock (_gate)
        {
            _closing = true;
        }

        // Off the loop, the channel's close is a task for it, which a loop that terminated would never run.
        if (_channel.EventLoop.InEventLoop)
        {
            AbortTask(this);
        }
        else
        {
            LoopTask.Execute(_channel.EventLoop, AbortTask, CloseLost, this);
        }
    }

    public override string ToString() => $"{_channel.LocalAddress} -> {_channel.RemoteAddress}";

    /// <summary>An endpoint as the core's sockets name it: DotNetty's dual-mode sockets give IPv4 peers as IPv6-mapped addresses.</summary>
    internal static IPEndPoint Unmapped(EndPoint endpoint)
    {
        var ip = (IPEndPoint)endpoint;
        return ip.Address.IsIPv4MappedToIPv6 ? new IPEndPoint(ip.Address.MapToIPv4(), ip.Port) : ip;
    }

    private void HandOff() => Tail.WriteQueued(_queue);

    private void HandOffThenClose()
    {
        HandOff();
        Tail.FlushThenClose(_channel);
    }

    // Off the event loop, once it terminated without running what this connection gave it: nothing queued will be
    // written, so every write is refused from now on, and the reader (given now, or before) hears the connection ended
    // and why; a close that lost nothing is heard as an orderly one. Heard on the thread pool, not here: this may run
    // inside TryWrite's lock.
    private void EndWithoutLoop(string what, IPayloadReceiver? receiver = null, bool orderlyIfAllSent = false)
    {
        lock (_gate)
        {
            _closing = true;
        }

        var unsent = _queue.QueuedBytes;
        _queue.Clear();
        DisposeCloseDeadline();
        var reason = orderlyIfAllSent && unsent == 0 ? null : new IOException(string.Create(CultureInfo.InvariantCulture,
            $"The connection {this} ended: its event loop stopped before it ran {what}, and {unsent:N0} bytes accepted were not sent."));
        ThreadPool.QueueUserWorkItem(static end => end.Tail.EndWithoutLoop(end.reason, end.receiver), (Tail, reason, receiver), preferLocal: false);
    }

    // Past the close's bound: what is still queued here or in the channel was not read by the peer; the connection ends
    // with a TimeoutException saying so when anything is, as the core's does.
    private void OnCloseDeadline()
    {
        var unsent = UnsentBytes;
        var reason = unsent == 0 ? null : SetupTimeouts.CloseAborted(ToString(), _settings.CloseTimeout, unsent);
        LoopTask.Execute(_channel.EventLoop, state => ((DotNettyConnection)state).Tail.Abort(reason), CloseLost, this);
    }

    // On the event loop, once the channel is inactive: nothing queued will be written, and no deadline is left to keep.
    private void OnEnded()
    {
        _queue.Clear();
        DisposeCloseDeadline();
    }

    private void DisposeCloseDeadline() => Interlocked.Exchange(ref _closeDeadline, null)?.Dispose();
}
