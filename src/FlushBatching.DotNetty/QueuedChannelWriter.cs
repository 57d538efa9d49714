using System.Runtime.InteropServices;
using DotNetty.Buffers;
using DotNetty.Transport.Channels;
using FlushBatching.Framing;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Loops;

namespace FlushBatching.DotNetty;

/// <summary>
/// Writes payloads to a channel from any thread, as FlushBatching's Akka transport writes them. A write is queued, not
/// handed to the event loop one by one: the first write after the loop has taken the queue schedules one drain, which
/// writes every payload queued down the pipeline and flushes once. With a <see cref="BatchingWriterHandler"/> made with
/// <see cref="BatchingWriterHandler.ExplicitFlushEndsBurst"/> and <see cref="FramingSettings"/> below it, that flush
/// ends the burst, so light traffic goes out at once and a busy writer's payloads go out in large sends, each framed
/// with one copy. <see cref="PayloadFrameDecoder"/> reads them on the other side.
/// </summary>
/// <remarks>
/// <para>
/// Put it last in the pipeline, or last before the handler that reads: <c>[tls] → PayloadFrameDecoder →
/// BatchingWriterHandler { ExplicitFlushEndsBurst = true } → QueuedChannelWriter → your reader</c>, the handler made
/// with <see cref="FramingSettings"/>: a payload that is a whole array goes down the pipeline as that <c>byte[]</c>,
/// which the handler frames, and only a handler with framing takes. Write once the channel is active. The payload is
/// written as it is, not copied: do not change it until it is sent.
/// </para>
/// <para>
/// Back-pressure: a write is refused (<see cref="TryWrite"/> returns <c>false</c>) while the bytes queued here and those
/// in the channel's outbound buffer pass the channel's high-water mark, so a writer faster than its peer cannot queue
/// without bound; try again later (Akka.Remote retries after its backoff). The writer owns the channel's water marks:
/// those of <see cref="ConnectionSettings.WithWriteBufferWaterMarks"/> stay as set, and unset, the high mark follows
/// how fast the connection drains, from <see cref="ConnectionSettings.WriteBufferHighWaterMark"/> up to four times it,
/// as on the core's connections. The outbound buffer is read on the event loop only, after each drain, as its writes
/// complete and as the channel's writability changes; <see cref="UnsentBytes"/> gives what was seen there.
/// </para>
/// <para>
/// <see cref="CloseAsync"/> is graceful within <see cref="ConnectionSettings.CloseTimeout"/>: later writes are refused,
/// what is queued is written and flushed, and the channel closes once the last write is on the wire. Past the bound it
/// is aborted, and a <see cref="TimeoutException"/> naming the bytes the peer did not read goes down the pipeline first.
/// Writes and the close's start are linearizable: a write is either refused or queued before the close's drain.
/// </para>
/// <para>
/// Work goes to the event loop as a task that either runs or, when the loop terminates first (or refuses it), is
/// answered off the loop: the writer then refuses every later write, drops what it queued, and tells
/// <c>onLoopStopped</c> how many bytes accepted were not sent. One instance per channel.
/// </para>
/// </remarks>
public sealed class QueuedChannelWriter : ChannelHandlerAdapter
{
    private static readonly Action<object> DrainTask = static state => ((QueuedChannelWriter)state).Drain();
    private static readonly Action<object> DrainLost = static state => ((QueuedChannelWriter)state).EndWithoutLoop("a drain of its writes", orderlyIfAllSent: false);
    private static readonly Action<object> CloseTask = static state => ((QueuedChannelWriter)state).DrainThenClose();
    private static readonly Action<object> CloseLost = static state => ((QueuedChannelWriter)state).EndWithoutLoop("its close", orderlyIfAllSent: true);
    private static readonly Action<object> DeadlineTask = static state => ((QueuedChannelWriter)state).AbortAtDeadline();
    private static readonly Action<object> AbortTask = static state => ObservedTasks.Observe(((QueuedChannelWriter)state)._context!.Channel.CloseAsync());
    private static readonly Action<object> LookAgainTask = static state => ((QueuedChannelWriter)state).LookAgain();
    private static readonly Action<Task, object?> WriteDone = static (written, state) =>
    {
        _ = written.Exception;
        ((QueuedChannelWriter)state!).OnWriteDone();
    };

    private readonly ConnectionSettings _settings;
    private readonly Action<Exception?>? _onLoopStopped;
    private readonly PayloadQueue _queue;
    private readonly WriteBufferMarks _marks;
    private readonly CloseDeadline _deadline;
    private readonly object _gate = new();
    private IChannelHandlerContext? _context;

    // Read and set under _gate only.
    private bool _closing;

    // Written on the event loop, read by writers: the outbound buffer's bytes and the high mark, as last seen there.
    private long _backlog;
    private long _high;

    // The event loop's alone.
    private long _written;
    private Task _lastWrite = Task.CompletedTask;
    private bool _ended;

    // 1 while a look at the outbound buffer after a write's end is queued on the event loop.
    private int _lookScheduled;

    // While a drain runs: a write that ends inside it (a flush the socket took at once) needs no look of its own, the
    // drain looks when it ends.
    private bool _draining;

    /// <summary>Creates a writer for one channel.</summary>
    /// <param name="settings">
    /// What the writer reads of a connection's settings: the water marks (<see cref="ConnectionSettings.WriteBufferHighWaterMark"/>
    /// and its low mark, fixed or following the drain rate), <see cref="ConnectionSettings.CloseTimeout"/>,
    /// <see cref="ConnectionSettings.Framing"/> (the largest payload), the clock and the metrics. The rest are the core's
    /// sockets' and are not read.
    /// </param>
    /// <param name="onLoopStopped">
    /// Told once, off the event loop, when the loop terminated (or refused work) before it ran a drain or the close this
    /// writer gave it: with an <see cref="IOException"/> naming the bytes accepted and not sent, or <c>null</c> when a
    /// close lost nothing. Nothing of the channel runs after that: this is where its reader learns that it ended.
    /// </param>
    public QueuedChannelWriter(ConnectionSettings settings, Action<Exception?>? onLoopStopped = null)
    {
        ArgumentNullException.ThrowIfNull(settings);
        _settings = settings;
        _onLoopStopped = onLoopStopped;
        _queue = new PayloadQueue(settings.TimeProvider, settings.Metrics);
        _marks = new WriteBufferMarks(settings);
        _high = _marks.High;
        _deadline = new CloseDeadline(settings, OnCloseDeadline);
    }

    /// <summary>
    /// Bytes accepted and not yet on the wire: queued here, and in the channel's outbound buffer when the event loop last
    /// looked (after each drain, as its writes completed, as the channel's writability changed). Framed bytes: each
    /// payload with its prefix.
    /// </summary>
    public long UnsentBytes => _queue.QueuedBytes + Volatile.Read(ref _backlog);

    /// <summary>The channel's high-water mark now: what <see cref="TryWrite"/> refuses above.</summary>
    public long HighWaterMark => Volatile.Read(ref _high);

    /// <summary>
    /// Queues <paramref name="payload"/> for the channel, from any thread, in order with this thread's earlier writes.
    /// </summary>
    /// <returns>
    /// <c>true</c> when queued; <c>false</c> when refused: the channel is above its high-water mark (try again once it
    /// drains), or closing, or closed, or its event loop stopped.
    /// </returns>
    /// <exception cref="ArgumentException">The payload does not fit in a frame of <see cref="ConnectionSettings.Framing"/>.</exception>
    /// <exception cref="InvalidOperationException">The writer is not in a channel's pipeline yet.</exception>
    public bool TryWrite(ReadOnlyMemory<byte> payload)
    {
        FrameEncoder.EnsurePayloadFits(payload.Length, _settings.Framing);
        var channel = Channel;
        lock (_gate)
        {
            if (_closing || !channel.Open)
            {
                return false;
            }

            // Unsent bytes are those queued here and those in the channel's outbound buffer: a write is refused once they
            // pass the high-water mark, even while a busy event loop has not taken the queue.
            var room = channel.IsWritable ? Math.Max(0, Volatile.Read(ref _high) - Volatile.Read(ref _backlog)) : -1;
            switch (_queue.TryEnqueue(payload, room))
            {
                case PayloadQueue.Outcome.Refused:
                    _settings.Metrics.RecordRefused();
                    return false;
                case PayloadQueue.Outcome.QueuedHandOffNeeded:
                    LoopTask.Execute(channel.EventLoop, DrainTask, DrainLost, this);

                    // On a loop terminated already, the drain's fallback has just ended the writer: this write is
                    // refused with the rest.
                    return !_closing;
            }

            return true;
        }
    }

    /// <summary>
    /// Refuses writes from now on, writes and flushes what is queued, and closes the channel once the last write is on
    /// the wire, or aborts it at <see cref="ConnectionSettings.CloseTimeout"/> from the first call, whichever comes first.
    /// </summary>
    /// <returns>The channel's close completion.</returns>
    public Task CloseAsync()
    {
        var channel = Channel;
        bool first;
        lock (_gate)
        {
            first = !_closing;
            _closing = true;
        }

        if (first && channel.Open)
        {
            _deadline.Arm(() => !channel.Open);
            LoopTask.Execute(channel.EventLoop, CloseTask, CloseLost, this);
        }

        return channel.CloseCompletion;
    }

    /// <summary>Refuses writes from now on and closes the channel at once: what is queued, and what the channel holds unsent, is dropped.</summary>
    public void Abort()
    {
        var channel = Channel;
        lock (_gate)
        {
            _closing = true;
        }

        // Off the loop, the channel's close is a task for it, which a loop that terminated would never run.
        if (channel.EventLoop.InEventLoop)
        {
            AbortTask(this);
        }
        else
        {
            LoopTask.Execute(channel.EventLoop, AbortTask, CloseLost, this);
        }
    }

    /// <inheritdoc />
    public override string ToString() => _context?.Channel is { } channel
        ? PeerEndPoints.Describe(channel.LocalAddress, channel.RemoteAddress)
        : "a writer not in a pipeline";

    /// <summary>Takes the channel: its water marks are this writer's from now on.</summary>
    public override void HandlerAdded(IChannelHandlerContext context)
    {
        Volatile.Write(ref _context, context);
        SetMarks(context.Channel);
    }

    /// <summary>Looks at the outbound buffer (and moves the water marks when the drain rate says so), then passes the event on.</summary>
    public override void ChannelWritabilityChanged(IChannelHandlerContext context)
    {
        ObserveBacklog(context.Channel);
        context.FireChannelWritabilityChanged();
    }

    /// <summary>Drops what is queued (nothing of it will be written) and stops the close's bound, then passes the event on.</summary>
    public override void ChannelInactive(IChannelHandlerContext context)
    {
        _ended = true;
        _queue.Clear();
        _deadline.Disarm();
        Volatile.Write(ref _backlog, 0);
        context.FireChannelInactive();
    }

    private IChannel Channel => Volatile.Read(ref _context)?.Channel
        ?? throw new InvalidOperationException("The QueuedChannelWriter is not in a channel's pipeline yet: add it, then write once the channel is active.");

    // On the event loop: every payload queued goes down the pipeline, then one flush, which ends the burst for a
    // BatchingWriterHandler made with ExplicitFlushEndsBurst, as the core's send loop ends one when it finds its queue
    // empty. While the queue delay is heard, a WritesQueuedSince goes first, so that the delay counts from when the write
    // that asked for this drain was queued.
    private void Drain()
    {
        var context = _context!;
        if (!_ended && _queue.WaitingSince is var since and not 0)
        {
            context.WriteAsync(new WritesQueuedSince(since));
        }

        _draining = true;
        try
        {
            _queue.HandOff(this, static (writer, payload) => writer.Write(payload));
        }
        finally
        {
            // A write that threw ends the drain too: what it wrote before goes out, and later writes are not left
            // waiting for a burst end nobody will report.
            context.Flush();
            _draining = false;
            ObserveBacklog(context.Channel);
        }
    }

    // One payload down the pipeline, wrapped, not copied. Each write task's end is heard, once per task (combined writes
    // share one per batch, so a continuation per batch): the outbound buffer is looked at again then, since the socket
    // drains it with no event of its own, and a count left standing would refuse writes, and keep a close's or a gauge's
    // unsent bytes, long after they were sent. Its failure (the channel closed first: an abort past the close bound, a
    // reset) is observed there too, as nobody else awaits it.
    private void Write(ReadOnlyMemory<byte> payload)
    {
        // Accepted just before the channel ended, drained after: nothing can be written now, and the write's failed task
        // would come after the end observed the last one.
        if (_ended)
        {
            return;
        }

        _written += FrameEncoder.FrameLength(payload.Length);
        var written = _context!.WriteAsync(Message(payload));
        if (!ReferenceEquals(written, _lastWrite))
        {
            _lastWrite = written;
            if (written.IsCompleted)
            {
                _ = written.Exception;
            }
            else
            {
                written.ContinueWith(WriteDone, this, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
            }
        }
    }

    private void DrainThenClose()
    {
        Drain();
        var channel = _context!.Channel;
        _lastWrite.ContinueWith(
            static (_, channel) => ObservedTasks.Observe(((IChannel)channel!).CloseAsync()),
            channel, CancellationToken.None, TaskContinuationOptions.None, TaskScheduler.Default);
    }

    // On the event loop, the one reader of the outbound buffer: what it holds is published for writers, and what the
    // channel has sent so far (written less held) moves the water marks when the drain rate says so.
    private void ObserveBacklog(IChannel channel)
    {
        var unsent = channel.Unsafe.OutboundBuffer?.TotalPendingWriteBytes() ?? 0;
        Volatile.Write(ref _backlog, unsent);
        if (_marks.Observe(_written - unsent, unsent))
        {
            SetMarks(channel);
        }
    }

    // A write ended. DotNetty completes a write before it takes its bytes off the outbound buffer's count, so the look
    // is a task of its own, behind the one completing it: one at a time, however many writes end before it runs. None
    // while nothing was seen unsent (the last look found the buffer empty: nothing stale to correct), nor inside a
    // drain, which looks as it ends: a socket that takes each flush at once costs no task here.
    private void OnWriteDone()
    {
        if (_draining || Volatile.Read(ref _backlog) == 0)
        {
            return;
        }

        if (Interlocked.Exchange(ref _lookScheduled, 1) == 0)
        {
            LoopTask.Execute(_context!.Channel.EventLoop, LookAgainTask, static _ => { }, this);
        }
    }

    private void LookAgain()
    {
        Volatile.Write(ref _lookScheduled, 0);
        if (!_ended)
        {
            ObserveBacklog(_context!.Channel);
        }
    }

    // The outbound buffer compares against both on this event loop, so it never sees one moved without the other.
    private void SetMarks(IChannel channel)
    {
        channel.Configuration.WriteBufferHighWaterMark = (int)_marks.High;
        channel.Configuration.WriteBufferLowWaterMark = (int)_marks.Low;
        Volatile.Write(ref _high, _marks.High);
    }

    // Past the close's bound, on a timer's thread: the abort is the event loop's, where the unsent bytes are read.
    private void OnCloseDeadline() => LoopTask.Execute(Channel.EventLoop, DeadlineTask, CloseLost, this);

    // What is still queued here or in the channel was not read by the peer: the pipeline hears a TimeoutException saying
    // so when anything is, as the core's connections say it, and the channel closes now.
    private void AbortAtDeadline()
    {
        var context = _context!;
        ObserveBacklog(context.Channel);
        if (_deadline.AbortReason(this, UnsentBytes) is { } reason)
        {
            context.FireExceptionCaught(reason);
        }

        ObservedTasks.Observe(context.Channel.CloseAsync());
    }

    // Off the event loop, once it terminated without running what this writer gave it: nothing queued will be written,
    // so every write is refused from now on, and onLoopStopped hears why; a close that lost nothing is an orderly end.
    // Heard on the thread pool, not here: this may run inside TryWrite's lock.
    private void EndWithoutLoop(string what, bool orderlyIfAllSent)
    {
        lock (_gate)
        {
            _closing = true;
        }

        var unsent = _queue.QueuedBytes;
        _queue.Clear();
        _deadline.Disarm();
        var reason = orderlyIfAllSent && unsent == 0 ? null : LoopTask.Lost(this, what, unsent);
        if (_onLoopStopped is { } heard)
        {
            ThreadPool.QueueUserWorkItem(static end => end.heard(end.reason), (heard, reason), preferLocal: false);
        }
    }

    // A payload that is a whole array goes down as that array, which BatchingWriterHandler with framing takes as a
    // payload: copied once into its combine buffer when small, with nothing allocated for it, or wrapped when large. Part
    // of an array is wrapped here, not copied.
    private static object Message(ReadOnlyMemory<byte> payload) =>
        MemoryMarshal.TryGetArray(payload, out var segment)
            ? segment.Offset == 0 && segment.Count == segment.Array!.Length
                ? segment.Array
                : Unpooled.WrappedBuffer(segment.Array, segment.Offset, segment.Count)
            : payload.ToArray();
}
