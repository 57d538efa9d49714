using DotNetty.Buffers;
using DotNetty.Transport.Channels;
using DotNetty.Transport.Channels.Sockets;
using FlushBatching.Batching;
using FlushBatching.Diagnostics;
using FlushBatching.Framing;

namespace FlushBatching.DotNetty;

/// <summary>
/// Batches a channel's writes into few flushes. A flush on a socket channel is a syscall: one per message costs CPU and
/// makes throughput swing. This handler flushes on the first of <see cref="BatchingSettings.MaxPendingWrites"/> writes,
/// <see cref="BatchingSettings.MaxPendingBytes"/> bytes, the oldest write having waited
/// <see cref="BatchingSettings.FlushInterval"/>, read complete, or the end of the burst (the event loop has run
/// everything queued behind the first write and no new write turned up). Light traffic goes out at once, heavy traffic
/// in large flushes.
/// </summary>
/// <remarks>
/// <para>
/// Put it nearer the socket than your encoders, so that it sees what goes to the socket, framed: after TLS (which
/// encrypts what this handler flushes), before the length-field encoder, as in
/// <c>AddLast("tls", ...)</c>, <c>AddLast("batching", new BatchingWriterHandler(settings))</c>,
/// <c>AddLast("frame-decoder", ...)</c>, <c>AddLast("frame-encoder", ...)</c>, <c>AddLast("app", ...)</c>. Added
/// after an encoder (nearer the application), it would combine messages before the encoder frames them, so the peer
/// would decode a batch as one message: when it combines unframed buffers it refuses that place, by throwing from
/// <see cref="HandlerAdded"/>.
/// </para>
/// <para>
/// It combines writes: a buffer of at most half <see cref="CombineBufferSize"/> bytes is copied into a combine buffer
/// from the channel's allocator and released, and the combine buffer goes down as one write at a flush, or before a
/// larger write (passed through as it is) or a message of another type, so order is kept. The socket gets one large
/// buffer instead of many small ones, and DotNetty's outbound buffer one entry and one completion per combine buffer.
/// The first small write of a batch is held and copied only when a second joins it: a batch of one goes down uncopied.
/// A combined write's task completes, or fails, with its combine buffer's. <see cref="CombineBufferSize"/> 0 turns
/// combining off. Given <see cref="FramingSettings"/>, it also writes each payload's 4-byte length prefix where it
/// combines, so no length-field encoder is needed and a payload is copied at most once; a payload may then be written
/// as its <c>byte[]</c>, which saves the buffer that would wrap it.
/// </para>
/// <para>
/// An explicit flush from upstream is held until the next trigger, never longer than the interval, unless
/// <see cref="ExplicitFlushEndsBurst"/> says the writer flushes where its bursts end. Before a close (a
/// disconnect is one on stream channels: DotNetty turns it into a close), an exception travelling the pipeline, the
/// handler's removal, and when the channel turns unwritable, what is pending is flushed first. A timer runs only while
/// writes are pending. Flushes are counted on the <c>FlushBatching</c> Meter, by reason. State is touched on the
/// channel's event loop only; one instance per channel.
/// </para>
/// </remarks>
public sealed class BatchingWriterHandler : ChannelDuplexHandler
{
    /// <summary>
    /// 16 KiB, the default <see cref="BatchingSettings.MaxPendingBytes"/>: a batch of small messages fits in one
    /// combine buffer, and messages up to 8 KiB are combined.
    /// </summary>
    public const int DefaultCombineBufferSize = 16 * 1024;

    /// <summary>The largest combine buffer allowed: 16 MiB.</summary>
    public const int MaxCombineBufferSize = 16 * 1024 * 1024;

    private readonly FlushPolicy _policy;
    private readonly TimeProvider _timeProvider;
    private readonly FlushBatchingMetrics _metrics;
    private readonly WriteCombiner _combiner;
    private readonly BurstEndCheck _burstEnd;
    private readonly IntervalTimer _interval;
    private IChannelHandlerContext? _context;

    // Set while a write is being put down. The channel may turn unwritable part-way (the combine buffer before it goes
    // down first): the drain then waits for the write's end, so it flushes the write too instead of leaving it behind.
    private bool _writing;
    private bool _drainWhenWritten;

    // When the oldest pending write was written or queued, for the queue-delay metric; 0 when that went unheard.
    private long _batchSince;

    // From a WritesQueuedSince to the next flush: when the oldest of the writes now arriving was queued; null when
    // writes come straight in.
    private long? _queuedSince;

    /// <summary>Creates a handler; only <paramref name="settings"/> is needed, the rest have production defaults.</summary>
    /// <param name="settings">When to flush; <see cref="BatchingSettings.Default"/> is 30 writes, 16 KiB, 40 ms.</param>
    /// <param name="combineBufferSize">The size of a combine buffer; writes up to half of it are combined. 0 turns combining off.</param>
    /// <param name="timeProvider">The clock for <see cref="BatchingSettings.FlushInterval"/> and its timer; the system clock if <c>null</c>.</param>
    /// <param name="metrics">Where flushes are counted; the shared <c>FlushBatching</c> Meter if <c>null</c>.</param>
    /// <param name="framing">
    /// Given, each <see cref="IByteBuffer"/> written is a payload and gets a length prefix in this byte order, and so is
    /// each <c>byte[]</c>: a whole array is written as it is, with no buffer made for it, and copied once where it is
    /// combined (a larger one goes down wrapped). Without framing a <c>byte[]</c> is a message of another type.
    /// </param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="combineBufferSize"/> is negative or above <see cref="MaxCombineBufferSize"/>.</exception>
    public BatchingWriterHandler(
        BatchingSettings settings,
        int combineBufferSize = DefaultCombineBufferSize,
        TimeProvider? timeProvider = null,
        FlushBatchingMetrics? metrics = null,
        FramingSettings? framing = null)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(combineBufferSize);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(combineBufferSize, MaxCombineBufferSize);
        _timeProvider = timeProvider ?? TimeProvider.System;
        _metrics = metrics ?? FlushBatchingMetrics.Shared;
        _policy = new FlushPolicy(settings, _timeProvider);
        _combiner = new WriteCombiner(combineBufferSize, framing);
        _burstEnd = new BurstEndCheck(_policy, OnBurstEnd);
        _interval = new IntervalTimer(_timeProvider, OnIntervalDue);
    }

    /// <summary>
    /// Whether an explicit flush ends a burst: <c>true</c> for a writer that flushes once after each run of writes, as
    /// one that drains a queue of its own on the event loop does (the Akka transport's). The flush then goes out at
    /// once, and writes queue no look along the event loop's queue for the burst's end, where reads of this and other
    /// channels may wait first. <c>false</c> (the default) for writers that may flush per message
    /// (<c>WriteAndFlushAsync</c>): a flush is held until the next trigger, the burst's end among them.
    /// </summary>
    /// <value>Set once, when the handler is made.</value>
    public bool ExplicitFlushEndsBurst { get; init; }

    /// <summary>The settings this handler flushes by.</summary>
    public BatchingSettings Settings => _policy.Settings;

    /// <summary>The size of a combine buffer; writes of up to half of it are combined. 0 means combining is off.</summary>
    /// <value>The default is <see cref="DefaultCombineBufferSize"/>.</value>
    public int CombineBufferSize => _combiner.BufferSize;

    /// <inheritdoc />
    /// <exception cref="InvalidOperationException">
    /// The handler combines unframed buffers and an encoder sits between it and the socket: that encoder would frame a
    /// whole batch as one message. DotNetty then removes the handler and sends the exception down the pipeline.
    /// </exception>
    public override void HandlerAdded(IChannelHandlerContext context)
    {
        if (_combiner.BufferSize > 0 && !_combiner.WritesPrefixes)
        {
            EncoderPlacement.RequireNoEncoderNearerTheSocket(context);
        }

        _context = context;
    }

    /// <inheritdoc />
    public override void HandlerRemoved(IChannelHandlerContext context)
    {
        Drain(context);
        _interval.Dispose();
        _context = null;
    }

    /// <summary>Passes the write on without flushing, and flushes when a trigger says so.</summary>
    public override Task WriteAsync(IChannelHandlerContext context, object message)
    {
        if (message is WritesQueuedSince queued)
        {
            _queuedSince = queued.Timestamp;
            return Task.CompletedTask;
        }

        _burstEnd.CountWrite();
        var reason = _policy.OnWrite(_combiner.BytesOf(message));
        if (_policy.PendingWrites == 1)
        {
            // Batching on, the policy read the clock for the interval; off, it read none, and only the metric wants one.
            _batchSince = _queuedSince ?? (_policy.Settings.Enabled ? _policy.PendingSince : _metrics.QueueDelayStart(_timeProvider));
        }

        Task written;
        _writing = true;
        try
        {
            written = _combiner.Write(context, message);
        }
        finally
        {
            _writing = false;
        }

        if (_drainWhenWritten)
        {
            // Putting the write down turned the channel unwritable: the drain flushes it with what came before it.
            _drainWhenWritten = false;
            Drain(context);
            return written;
        }

        if (!_policy.HasPending)
        {
            // The channel ended under the write (ChannelInactive dropped what was pending): nothing is left to flush.
            return written;
        }

        if (reason != FlushReason.None)
        {
            FlushNow(context, reason);
        }
        else
        {
            if (!ExplicitFlushEndsBurst)
            {
                _burstEnd.QueueOn(context.Executor);
            }

            ArmTimer(context);
        }

        return written;
    }

    /// <summary>
    /// With writes pending, holds the flush until the next trigger, or flushes them now as the burst's end when
    /// <see cref="ExplicitFlushEndsBurst"/> is set; with none, passes it on.
    /// </summary>
    public override void Flush(IChannelHandlerContext context)
    {
        _queuedSince = null;
        if (!_policy.HasPending)
        {
            context.Flush();
        }
        else if (ExplicitFlushEndsBurst)
        {
            FlushNow(context, _policy.OnBurstEnd());
        }

        // Otherwise the write that made writes pending queued a burst-end check: the flush rides on it.
    }

    /// <summary>Flushes what was written while handling the read, then passes read complete on.</summary>
    public override void ChannelReadComplete(IChannelHandlerContext context)
    {
        if (_policy.HasPending)
        {
            FlushNow(context, FlushReason.ReadComplete);
        }

        context.FireChannelReadComplete();
    }

    /// <summary>Flushes what is pending before the channel stops being writable, then passes the event on.</summary>
    public override void ChannelWritabilityChanged(IChannelHandlerContext context)
    {
        if (!context.Channel.IsWritable)
        {
            if (_writing)
            {
                _drainWhenWritten = true;
            }
            else
            {
                Drain(context);
            }
        }

        context.FireChannelWritabilityChanged();
    }

    /// <inheritdoc />
    public override void ChannelInactive(IChannelHandlerContext context)
    {
        // Whatever was pending failed with the channel; nothing is left to flush or time.
        _policy.OnFlushed();
        _interval.Dispose();
        _combiner.Drop(new ClosedChannelException());
        context.FireChannelInactive();
    }

    /// <summary>Flushes what is pending, then passes the exception on.</summary>
    public override void ExceptionCaught(IChannelHandlerContext context, Exception exception)
    {
        Drain(context);
        context.FireExceptionCaught(exception);
    }

    /// <summary>Flushes what is pending, cancels the timer, then closes.</summary>
    public override Task CloseAsync(IChannelHandlerContext context)
    {
        Drain(context);
        _interval.Dispose();
        return context.CloseAsync();
    }

    private void Drain(IChannelHandlerContext context)
    {
        if (_policy.HasPending)
        {
            FlushNow(context, FlushReason.Drain);
        }
    }

    private void FlushNow(IChannelHandlerContext context, FlushReason reason)
    {
        // State first, then the write and the flush: a handler re-entered from either (the write may turn the
        // channel unwritable) sees nothing pending.
        var writes = _policy.PendingWrites;
        var bytes = _policy.PendingBytes;
        _policy.OnFlushed();
        _interval.Disarm();
        _combiner.WriteCombined(context);
        _metrics.RecordSend(writes, bytes, reason, _batchSince, _timeProvider);
        context.Flush();
    }

    private void OnBurstEnd()
    {
        if (_context is { } context)
        {
            FlushNow(context, _policy.OnBurstEnd());
        }
    }

    private void OnIntervalDue()
    {
        if (_context is not { } context)
        {
            return;
        }

        var reason = _policy.OnTimer();
        if (reason != FlushReason.None)
        {
            FlushNow(context, reason);
        }
        else
        {
            ArmTimer(context);
        }
    }

    private void ArmTimer(IChannelHandlerContext context)
    {
        // Armed, it already fires by the oldest pending write's due time: no clock read per write.
        if (!_interval.IsArmed && _policy.TimeUntilDue is { } due)
        {
            _interval.Arm(context.Executor, due);
        }
    }
}
