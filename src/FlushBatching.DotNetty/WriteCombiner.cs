using DotNetty.Buffers;
using DotNetty.Transport.Channels;
using FlushBatching.Framing;

namespace FlushBatching.DotNetty;

/// <summary>
/// The combining of <see cref="BatchingWriterHandler"/>: small buffers copied into one combine buffer, large ones and
/// other messages passed through after it, and, with framing, each payload's length prefix written on the way.
/// </summary>
/// <remarks>Touched on the channel's event loop only, by the one handler that owns it.</remarks>
internal sealed class WriteCombiner
{
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

    private readonly FramingSettings? _framing;
    private readonly int _prefixLength;
    private readonly byte[] _prefix = new byte[FramingSettings.HeaderLength];
    private IByteBuffer? _combined;
    private IByteBuffer? _held;
    private TaskCompletionSource? _combinedWritten;

    public WriteCombiner(int bufferSize, FramingSettings? framing)
    {
        BufferSize = bufferSize;
        _framing = framing;
        _prefixLength = framing is null ? 0 : FramingSettings.HeaderLength;
    }

    public int BufferSize { get; }

    /// <summary>Whether it writes each buffer's length prefix itself (framing given), so no encoder frames its output.</summary>
    public bool WritesPrefixes => _framing is not null;

    /// <summary>
    /// The bytes a message puts on the wire: a buffer's readable bytes, or with framing a <c>byte[]</c> payload's length,
    /// and its prefix; 0 for anything else.
    /// </summary>
    public int BytesOf(object message) => message switch
    {
        IByteBuffer buffer => buffer.ReadableBytes + _prefixLength,
        byte[] payload when _framing is not null => payload.Length + _prefixLength,
        _ => 0,
    };

    /// <summary>
    /// Combines a small buffer (with framing, a small <c>byte[]</c> payload too), or writes what is combined and then
    /// passes the message through; a <c>byte[]</c> payload too large to combine goes through wrapped, after its prefix.
    /// </summary>
    /// <returns>The message's write task: a combined one completes with its combine buffer.</returns>
    public Task Write(IChannelHandlerContext context, object message)
    {
        var small = BytesOf(message) <= BufferSize / 2 && context.Channel.Open;
        return message switch
        {
            IByteBuffer buffer when small => Combine(context, buffer),
            byte[] payload when _framing is not null => small
                ? Combine(context, payload)
                : PassThrough(context, Unpooled.WrappedBuffer(payload)),
            _ => PassThrough(context, message),
        };
    }

    /// <summary>Hands the combine buffer (or the one held write) down the pipeline; its writes' tasks complete with it.</summary>
    public void WriteCombined(IChannelHandlerContext context)
    {
        if (TakeBatch(out var completion) is { } batch)
        {
            context.WriteAsync(batch).ContinueWith(CompleteCombined, completion, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        }
    }

    /// <summary>Releases what is combined and fails its writes with <paramref name="reason"/>.</summary>
    public void Drop(Exception reason)
    {
        if (TakeBatch(out var completion) is { } batch)
        {
            batch.Release();
            completion.TrySetException(reason);
        }
    }

    // Holds the first small buffer of a batch as it is; copies the second and later ones into a combine buffer (the
    // held one first), starting a new one when it is full, and releases the originals. A batch of one write therefore
    // goes down without a copy or a combine buffer. A payload to frame cannot go down without its prefix: it is
    // always copied.
    private Task Combine(IChannelHandlerContext context, IByteBuffer buffer)
    {
        if (_combined is null && _held is null && _framing is null)
        {
            _held = buffer;
            return Completion();
        }

        var combined = CombineBuffer(context, BytesOf(buffer));
        WritePrefix(combined, buffer.ReadableBytes);
        CopyAndRelease(combined, buffer);
        return Completion();
    }

    // A payload given as its array (framing on): copied behind its prefix, no buffer made for it and none to release.
    private Task Combine(IChannelHandlerContext context, byte[] payload)
    {
        var combined = CombineBuffer(context, BytesOf(payload));
        WritePrefix(combined, payload.Length);
        combined.WriteBytes(payload);
        return Completion();
    }

    // The combine buffer with room for `bytes` more: the full one goes down first, and a new one takes the held write
    // first.
    private IByteBuffer CombineBuffer(IChannelHandlerContext context, int bytes)
    {
        if (_combined is { } full && full.WritableBytes < bytes)
        {
            WriteCombined(context);
        }

        if (_combined is null)
        {
            _combined = context.Allocator.Buffer(BufferSize, BufferSize);
            if (_held is { } held)
            {
                _held = null;
                CopyAndRelease(_combined, held);
            }
        }

        return _combined;
    }

    // The completion the writes of the batch now being combined share.
    private Task Completion() =>
        (_combinedWritten ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).Task;

    // A write that is not combined goes after everything combined before it, and a payload after its prefix.
    private Task PassThrough(IChannelHandlerContext context, object message)
    {
        WriteCombined(context);
        if (_framing is not null && message is IByteBuffer payload)
        {
            var prefix = context.Allocator.Buffer(FramingSettings.HeaderLength);
            WritePrefix(prefix, payload.ReadableBytes);
            // The prefix's task is this class's alone: a failure (the channel closed first) is the payload's too,
            // and is observed here so it does not surface as an UnobservedTaskException.
            context.WriteAsync(prefix).ContinueWith(
                static failed => _ = failed.Exception, CancellationToken.None,
                TaskContinuationOptions.OnlyOnFaulted | TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        }

        return context.WriteAsync(message);
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
}
