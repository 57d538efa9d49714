using DotNetty.Buffers;
using DotNetty.Transport.Channels;
using FlushBatching.Batching;
using FlushBatching.Diagnostics;

namespace FlushBatching.DotNetty;

/// <summary>
/// Batches a channel's writes into few flushes. A flush on a socket channel is a syscall; flushing each message
/// costs a syscall per message and makes throughput swing. This handler holds writes back and flushes on the first
/// of: <see cref="BatchingSettings.MaxPendingWrites"/> writes, <see cref="BatchingSettings.MaxPendingBytes"/>
/// bytes, the oldest write having waited <see cref="BatchingSettings.FlushInterval"/>, read complete, or the end of
/// the burst: the channel's event loop has run all the work queued behind the first write without a new write
/// turning up. Light traffic therefore goes out at once; heavy traffic goes out in large flushes.
/// </summary>
/// <remarks>
/// <para>
/// Put it at the outbound end of the pipeline, after the encoders, so it sees the buffers that go to the socket:
/// <c>pipeline.AddLast("batching", new BatchingWriterHandler(settings))</c> as the last outbound handler before
/// your application handler (TLS, when present, stays first: it encrypts what this handler flushes).
/// </para>
/// <para>
/// It counts the readable bytes of <see cref="IByteBuffer"/> messages; any other message counts as a write of 0
/// bytes. An explicit flush from upstream is held until the next trigger, and never longer than
/// <see cref="BatchingSettings.FlushInterval"/>. Before a close, a disconnect, an exception travelling the
/// pipeline, the handler's removal, and when the channel turns unwritable, everything pending is flushed first.
/// Write tasks complete or fail exactly as without the handler, in the same order. A timer runs only while writes
/// are pending, and is cancelled on close and removal. Flushes are counted on the <c>FlushBatching</c> Meter, by
/// reason, like the core's connections.
/// </para>
/// <para>
/// Its state is touched on the channel's event loop only; the interval timer hands its work to the event loop. One
/// instance serves one channel (it is not sharable).
/// </para>
/// </remarks>
public sealed class BatchingWriterHandler : ChannelDuplexHandler
{
    private static readonly Action<object> BurstEndTask = static state => ((BatchingWriterHandler)state).OnBurstEndTask();
    private static readonly Action<object> IntervalTask = static state => ((BatchingWriterHandler)state).OnIntervalTask();
    private static readonly TimerCallback OnTimerFired = static state =>
    {
        var handler = (BatchingWriterHandler)state!;
        handler._context?.Executor.Execute(IntervalTask, handler);
    };

    private readonly FlushPolicy _policy;
    private readonly TimeProvider _timeProvider;
    private readonly FlushBatchingMetrics _metrics;
    private IChannelHandlerContext? _context;
    private ITimer? _timer;
    private bool _timerArmed;
    private bool _burstEndQueued;
    private bool _burstEndLookedAgain;
    private long _writes;
    private long _writesWhenBurstEndQueued;

    /// <summary>Creates a handler with the given settings, the system clock and the shared Meter.</summary>
    /// <param name="settings">When to flush; <see cref="BatchingSettings.Default"/> is 30 writes, 16 KiB, 40 ms.</param>
    public BatchingWriterHandler(BatchingSettings settings)
        : this(settings, TimeProvider.System, FlushBatchingMetrics.Shared)
    {
    }

    /// <summary>Creates a handler with its clock and metrics given, such as a manual clock in tests.</summary>
    /// <param name="settings">When to flush.</param>
    /// <param name="timeProvider">The clock for <see cref="BatchingSettings.FlushInterval"/>, and its timer.</param>
    /// <param name="metrics">Where flushes are counted.</param>
    public BatchingWriterHandler(BatchingSettings settings, TimeProvider timeProvider, FlushBatchingMetrics metrics)
    {
        ArgumentNullException.ThrowIfNull(settings);
        _timeProvider = timeProvider ?? throw new ArgumentNullException(nameof(timeProvider));
        _metrics = metrics ?? throw new ArgumentNullException(nameof(metrics));
        _policy = new FlushPolicy(settings, timeProvider);
    }

    /// <summary>The settings this handler flushes by.</summary>
    public BatchingSettings Settings => _policy.Settings;

    /// <inheritdoc />
    public override void HandlerAdded(IChannelHandlerContext context) => _context = context;

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
        var bytes = message is IByteBuffer buffer ? buffer.ReadableBytes : 0;
        _writes++;
        var reason = _policy.OnWrite(bytes);
        var written = context.WriteAsync(message);
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
        if (_policy.HasPending)
        {
            QueueBurstEnd(context);
        }
        else
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
        context.FireChannelInactive();
    }

    /// <summary>Flushes what is pending, then passes the exception on.</summary>
    public override void ExceptionCaught(IChannelHandlerContext context, Exception exception)
    {
        Drain(context);
        context.FireExceptionCaught(exception);
    }

    /// <summary>Flushes what is pending, then disconnects.</summary>
    public override Task DisconnectAsync(IChannelHandlerContext context)
    {
        Drain(context);
        return context.DisconnectAsync();
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
        // State first, then the flush: a handler re-entered from the flush sees nothing pending.
        var writes = _policy.PendingWrites;
        var bytes = _policy.PendingBytes;
        _policy.OnFlushed();
        DisarmTimer();
        _metrics.RecordSend(writes, bytes, reason);
        context.Flush();
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
