using DotNetty.Buffers;
using DotNetty.Transport.Channels;
using DotNetty.Transport.Channels.Sockets;
using FlushBatching.Batching;
using FlushBatching.Diagnostics;
using FlushBatching.Framing;

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
/// It also combines writes: a buffer of at most half <see cref="CombineBufferSize"/> bytes is copied into one combine
/// buffer (from the channel's allocator) and released at once, and the combine buffer goes down the pipeline as one
/// write when a flush trigger fires or a larger write (which passes through as it is) or a message of another type
/// comes along, so the order of writes is kept. The first small write of a batch is held as it is and copied only when a second one joins
/// it: a batch of one, the usual case at light load, goes down without a copy or a combine buffer. The socket then
/// gets one large buffer instead of many small ones ("passing many small buffers to writev can be much slower than one
/// big buffer", as gRPC-java measured), and DotNetty's outbound buffer keeps one entry, with one completion, per
/// combine buffer instead of one per message. The task of a combined write completes when the combine buffer has been
/// written to the socket, or fails with the error that stopped it, as the write would on its own.
/// <see cref="CombineBufferSize"/> 0 turns combining off.
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
    /// <summary>
    /// 16 KiB, the default <see cref="BatchingSettings.MaxPendingBytes"/>: a batch of small messages fits in one
    /// combine buffer, and messages up to 8 KiB are combined.
    /// </summary>
    public const int DefaultCombineBufferSize = 16 * 1024;

    /// <summary>The largest combine buffer allowed: 16 MiB.</summary>
    public const int MaxCombineBufferSize = 16 * 1024 * 1024;

    private static readonly Action<object> BurstEndTask = static state => ((BatchingWriterHandler)state).OnBurstEndTask();
    private static readonly Action<object> IntervalTask = static state => ((BatchingWriterHandler)state).OnIntervalTask();
    private static readonly Action<Task, object?> CompleteCombined = static (written, state) =>
    {
        var completion = (TaskCompletionSource)state!;
        if (written.IsFaulted)
        {
            completion.TrySetException(written.Exception!.InnerExceptions);
        }
        else if (written.IsCanceled)
        {
            completion.TrySetCanceled();
        }
        else
        {
            completion.TrySetResult();
        }
    };

    private static readonly TimerCallback OnTimerFired = static state =>
    {
        var handler = (BatchingWriterHandler)state!;
        handler._context?.Executor.Execute(IntervalTask, handler);
    };

    private readonly FlushPolicy _policy;
    private readonly TimeProvider _timeProvider;
    private readonly FlushBatchingMetrics _metrics;
    private readonly int _combineBufferSize;
    private readonly FramingSettings? _framing;
    private readonly int _prefixLength;
    private readonly byte[] _prefix = new byte[FramingSettings.HeaderLength];
    private IChannelHandlerContext? _context;
    private IByteBuffer? _combined;
    private IByteBuffer? _held;
    private TaskCompletionSource? _combinedWritten;
    private ITimer? _timer;
    private bool _timerArmed;
    private bool _burstEndQueued;
    private bool _burstEndLookedAgain;
    private long _writes;
    private long _writesWhenBurstEndQueued;

    /// <summary>Creates a handler with the given settings, write combining on, the system clock and the shared Meter.</summary>
    /// <param name="settings">When to flush; <see cref="BatchingSettings.Default"/> is 30 writes, 16 KiB, 40 ms.</param>
    public BatchingWriterHandler(BatchingSettings settings)
        : this(settings, DefaultCombineBufferSize, TimeProvider.System, FlushBatchingMetrics.Shared)
    {
    }

    /// <summary>Creates a handler with write combining on and its clock and metrics given, such as a manual clock in tests.</summary>
    /// <param name="settings">When to flush.</param>
    /// <param name="timeProvider">The clock for <see cref="BatchingSettings.FlushInterval"/>, and its timer.</param>
    /// <param name="metrics">Where flushes are counted.</param>
    public BatchingWriterHandler(BatchingSettings settings, TimeProvider timeProvider, FlushBatchingMetrics metrics)
        : this(settings, DefaultCombineBufferSize, timeProvider, metrics)
    {
    }

    /// <summary>Creates a handler with every choice given.</summary>
    /// <param name="settings">When to flush.</param>
    /// <param name="combineBufferSize">The size of a combine buffer; writes up to half of it are combined. 0 turns combining off.</param>
    /// <param name="timeProvider">The clock for <see cref="BatchingSettings.FlushInterval"/>, and its timer.</param>
    /// <param name="metrics">Where flushes are counted.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="combineBufferSize"/> is negative or above <see cref="MaxCombineBufferSize"/>.</exception>
    public BatchingWriterHandler(BatchingSettings settings, int combineBufferSize, TimeProvider timeProvider, FlushBatchingMetrics metrics)
        : this(settings, combineBufferSize, timeProvider, metrics, framing: null)
    {
    }

    /// <summary>
    /// Creates a handler that also frames: each <see cref="IByteBuffer"/> written is a payload, and the handler writes
    /// its 4-byte length prefix (in <paramref name="framing"/>'s byte order) where it combines, so a small payload is
    /// copied once, prefix and all, and a large one goes to the socket as it is, after a prefix of its own. With it, no
    /// length-field encoder is needed in the pipeline.
    /// </summary>
    /// <param name="settings">When to flush.</param>
    /// <param name="combineBufferSize">The size of a combine buffer; frames up to half of it are combined. 0 turns combining off.</param>
    /// <param name="timeProvider">The clock for <see cref="BatchingSettings.FlushInterval"/>, and its timer.</param>
    /// <param name="metrics">Where flushes are counted.</param>
    /// <param name="framing">The byte order of the length prefix; <c>null</c> writes messages as they are.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="combineBufferSize"/> is negative or above <see cref="MaxCombineBufferSize"/>.</exception>
    public BatchingWriterHandler(BatchingSettings settings, int combineBufferSize, TimeProvider timeProvider, FlushBatchingMetrics metrics, FramingSettings? framing)
    {
        ArgumentNullException.ThrowIfNull(settings);
        ArgumentOutOfRangeException.ThrowIfNegative(combineBufferSize);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(combineBufferSize, MaxCombineBufferSize);
        _timeProvider = timeProvider ?? throw new ArgumentNullException(nameof(timeProvider));
        _metrics = metrics ?? throw new ArgumentNullException(nameof(metrics));
        _policy = new FlushPolicy(settings, timeProvider);
        _combineBufferSize = combineBufferSize;
        _framing = framing;
        _prefixLength = framing is null ? 0 : FramingSettings.HeaderLength;
    }

    /// <summary>The settings this handler flushes by.</summary>
    public BatchingSettings Settings => _policy.Settings;

    /// <summary>The size of a combine buffer; writes of up to half of it are combined. 0 means combining is off.</summary>
    /// <value>The default is <see cref="DefaultCombineBufferSize"/>.</value>
    public int CombineBufferSize => _combineBufferSize;

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
        var bytes = message is IByteBuffer buffer ? buffer.ReadableBytes + _prefixLength : 0;
        _writes++;
        var reason = _policy.OnWrite(bytes);
        var written = message is IByteBuffer small && bytes <= _combineBufferSize / 2 && context.Channel.Open
            ? Combine(context, small)
            : PassThrough(context, message);
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
        DropCombined(new ClosedChannelException());
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
        // State first, then the write and the flush: a handler re-entered from either (the write may turn the
        // channel unwritable) sees nothing pending.
        var writes = _policy.PendingWrites;
        var bytes = _policy.PendingBytes;
        _policy.OnFlushed();
        DisarmTimer();
        WriteCombined(context);
        _metrics.RecordSend(writes, bytes, reason);
        context.Flush();
    }

    // Holds the first small buffer of a batch as it is; copies the second and later ones into a combine buffer (the
    // held one first), starting a new one when it is full, and releases the originals. A batch of one write therefore
    // goes down without a copy or a combine buffer: light traffic costs no more than without combining.
    private Task Combine(IChannelHandlerContext context, IByteBuffer buffer)
    {
        if (_combined is { } combined && combined.WritableBytes < buffer.ReadableBytes + _prefixLength)
        {
            WriteCombined(context);
        }

        _combinedWritten ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        // A payload cannot go down as it is, without its prefix: framing always combines.
        if (_combined is null && _held is null && _framing is null)
        {
            _held = buffer;
            return _combinedWritten.Task;
        }

        if (_combined is null)
        {
            _combined = context.Allocator.Buffer(_combineBufferSize, _combineBufferSize);
            if (_held is { } held)
            {
                _held = null;
                CopyAndRelease(_combined, held);
            }
        }

        WritePrefix(_combined, buffer.ReadableBytes);
        CopyAndRelease(_combined, buffer);
        return _combinedWritten.Task;
    }

    private void WritePrefix(IByteBuffer target, int payloadLength)
    {
        if (_framing is { } framing)
        {
            FrameEncoder.WriteHeader(_prefix, payloadLength, framing.ByteOrder);
            target.WriteBytes(_prefix);
        }
    }

    private static void CopyAndRelease(IByteBuffer target, IByteBuffer buffer)
    {
        target.WriteBytes(buffer, buffer.ReaderIndex, buffer.ReadableBytes);
        buffer.Release();
    }

    // A write that is not combined goes after everything combined before it.
    private Task PassThrough(IChannelHandlerContext context, object message)
    {
        WriteCombined(context);
        if (_framing is not null && message is IByteBuffer payload)
        {
            var prefix = context.Allocator.Buffer(FramingSettings.HeaderLength);
            WritePrefix(prefix, payload.ReadableBytes);
            context.WriteAsync(prefix);
        }

        return context.WriteAsync(message);
    }

    // Hands the combine buffer (or the one held write) down the pipeline; its messages' tasks complete with its write.
    private void WriteCombined(IChannelHandlerContext context)
    {
        if (TakeBatch(out var completion) is { } batch)
        {
            context.WriteAsync(batch).ContinueWith(CompleteCombined, completion, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        }
    }

    private void DropCombined(Exception reason)
    {
        if (TakeBatch(out var completion) is { } batch)
        {
            batch.Release();
            completion.TrySetException(reason);
        }
    }

    // Takes what waits to go down (the combine buffer or the one held write) and the completion its writes share.
    private IByteBuffer? TakeBatch(out TaskCompletionSource completion)
    {
        var batch = _combined ?? _held;
        completion = _combinedWritten!;
        _combined = null;
        _held = null;
        _combinedWritten = null;
        return batch;
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
