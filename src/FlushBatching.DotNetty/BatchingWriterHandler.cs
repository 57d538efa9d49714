using DotNetty.Buffers;
using DotNetty.Common.Concurrency;
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
/// combines, so no length-field encoder is needed and a payload is copied at most once.
/// </para>
/// <para>
/// An explicit flush from upstream is held until the next trigger, never longer than the interval. Before a close (a
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

    private static readonly Action<object> BurstEndTask = static state => ((BatchingWriterHandler)state).OnBurstEndTask();
    private static readonly Action<object> IntervalTask = static state => ((BatchingWriterHandler)state).OnIntervalTask();
    private static readonly TimerCallback OnTimerFired = static state =>
    {
        // An event loop shutting down after the timer was armed has closed its channels: nothing is left to flush.
        // DotNetty 0.7.6 would take the task and never run it; it does not throw.
        if ((state as BatchingWriterHandler)!._context?.Executor is { IsShuttingDown: false } executor)
        {
            executor.Execute(IntervalTask, state);
        }
    };

    private readonly FlushPolicy _policy;
    private readonly TimeProvider _timeProvider;
    private readonly FlushBatchingMetrics _metrics;
    private readonly WriteCombiner _combiner;
    private IChannelHandlerContext? _context;
    private ITimer? _timer;
    private bool _timerArmed;
    private bool _burstEndQueued;
    private bool _burstEndLookedAgain;
    private long _writes;
    private long _writesWhenBurstEndQueued;

    // When the oldest pending write was written, for the queue-delay metric.
    private long _batchSince;

    /// <summary>Creates a handler; only <paramref name="settings"/> is needed, the rest have production defaults.</summary>
    /// <param name="settings">When to flush; <see cref="BatchingSettings.Default"/> is 30 writes, 16 KiB, 40 ms.</param>
    /// <param name="combineBufferSize">The size of a combine buffer; writes up to half of it are combined. 0 turns combining off.</param>
    /// <param name="timeProvider">The clock for <see cref="BatchingSettings.FlushInterval"/> and its timer; the system clock if <c>null</c>.</param>
    /// <param name="metrics">Where flushes are counted; the shared <c>FlushBatching</c> Meter if <c>null</c>.</param>
    /// <param name="framing">Given, each <see cref="IByteBuffer"/> written is a payload and gets a length prefix in this byte order.</param>
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
    }

    /// <summary>
    /// Set by a writer that queues for the event loop before writing here (the Akka adapter's drain): when the oldest
    /// of the writes now arriving was queued, as a timestamp of the handler's clock; 0 when writes come straight in.
    /// A batch that starts while it is set counts its queue delay from it, not from its first write here.
    /// </summary>
    internal long QueuedSince { get; set; }

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
        if (_combiner.BufferSize > 0 && !_combiner.WritesPrefixes && EncoderNearerTheSocket(context) is { } encoder)
        {
            throw new InvalidOperationException(
                $"BatchingWriterHandler was added after the encoder '{encoder}', nearer the application: it would combine " +
                "messages before they are encoded, and the encoder would frame each batch as one message. Add it nearer the " +
                "socket than your encoders (after TLS, before the length-field encoder), or pass combineBufferSize: 0.");
        }

        _context = context;
    }

    /// <inheritdoc />
    public override void HandlerRemoved(IChannelHandlerContext context)
    {
        Drain(context);
        DisposeTimer();
        _context = null;
    }

    /// <summary>Passes the write on without flushing, and flushes when a trigger says so.</summary>
    public override Task WriteAsync(IChannelHandlerContext context, object message)
    {
        _writes++;
        if (!_policy.HasPending)
        {
            _batchSince = QueuedSince != 0 ? QueuedSince : _timeProvider.GetTimestamp();
        }

        var reason = _policy.OnWrite(_combiner.BytesOf(message));
        var written = _combiner.Write(context, message);
        if (!_policy.HasPending)
        {
            // The write turned the channel unwritable and the drain that followed already flushed it.
            return written;
        }

        if (reason != FlushReason.None)
        {
            FlushNow(context, reason);
        }
        else
        {
            QueueBurstEnd(context);
            ArmTimer();
        }

        return written;
    }

    /// <summary>With writes pending, holds the flush until the next trigger; with none, passes it on.</summary>
    public override void Flush(IChannelHandlerContext context)
    {
        // Pending writes always have a burst-end check queued (the write that made them pending queued it): the
        // flush rides on it.
        if (!_policy.HasPending)
        {
            context.Flush();
        }
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
            Drain(context);
        }

        context.FireChannelWritabilityChanged();
    }

    /// <inheritdoc />
    public override void ChannelInactive(IChannelHandlerContext context)
    {
        // Whatever was pending failed with the channel; nothing is left to flush or time.
        _policy.OnFlushed();
        DisposeTimer();
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
        DisposeTimer();
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
        DisarmTimer();
        _combiner.WriteCombined(context);
        _metrics.RecordSend(writes, bytes, reason, _timeProvider.GetElapsedTime(_batchSince));
        context.Flush();
    }

    // The name of the first encoder between this handler and the head of the pipeline (the socket), if any.
    private static string? EncoderNearerTheSocket(IChannelHandlerContext context)
    {
        foreach (var handler in context.Channel.Pipeline)
        {
            if (ReferenceEquals(handler, context.Handler))
            {
                return null;
            }

            if (IsEncoder(handler.GetType()))
            {
                return context.Channel.Pipeline.Context(handler)?.Name ?? handler.GetType().Name;
            }
        }

        return null;
    }

    // DotNetty's encoder bases (every one DotNetty.Codecs 0.7 has), by name: this package depends on
    // DotNetty.Transport, not on DotNetty.Codecs.
    private static bool IsEncoder(Type? type)
    {
        for (; type is not null; type = type.BaseType)
        {
            if (type.IsGenericType && type.GetGenericTypeDefinition().FullName is
                "DotNetty.Codecs.MessageToMessageEncoder`1" or "DotNetty.Codecs.MessageToByteEncoder`1" or
                "DotNetty.Codecs.MessageToMessageCodec`2")
            {
                return true;
            }
        }

        return false;
    }

    private void QueueBurstEnd(IChannelHandlerContext context)
    {
        if (_burstEndQueued)
        {
            return;
        }

        _burstEndQueued = true;
        _burstEndLookedAgain = false;
        _writesWhenBurstEndQueued = _writes;
        context.Executor.Execute(BurstEndTask, this);
    }

    private void OnBurstEndTask()
    {
        _burstEndQueued = false;
        if (_context is not { } context || !_policy.HasPending)
        {
            return;
        }

        if (!_burstEndLookedAgain || _writes != _writesWhenBurstEndQueued)
        {
            // Look again behind whatever was queued after the first write (it may write too), and behind the writes
            // that came in while this check waited: the burst has ended when a whole pass of the queue wrote nothing.
            QueueBurstEnd(context);
            _burstEndLookedAgain = true;
            return;
        }

        FlushNow(context, _policy.OnBurstEnd());
    }

    private void OnIntervalTask()
    {
        _timerArmed = false;
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
            ArmTimer();
        }
    }

    private void ArmTimer()
    {
        if (_timerArmed || _policy.TimeUntilDue is not { } due)
        {
            return;
        }

        _timer ??= _timeProvider.CreateTimer(OnTimerFired, this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        _timer.Change(due, Timeout.InfiniteTimeSpan);
        _timerArmed = true;
    }

    private void DisarmTimer()
    {
        if (_timerArmed)
        {
            _timer!.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
            _timerArmed = false;
        }
    }

    private void DisposeTimer()
    {
        _timerArmed = false;
        _timer?.Dispose();
        _timer = null;
    }
}
