using System.Runtime.InteropServices;
using DotNetty.Buffers;
using DotNetty.Handlers.Tls;
using DotNetty.Transport.Channels;
using FlushBatching.DotNetty;
using FlushBatching.Framing;
using FlushBatching.Tcp;
using Google.Protobuf;

namespace FlushBatching.Akka;

/// <summary>
/// The last handler of a <see cref="DotNettyConnection"/>'s pipeline: says when the connection is up (after its TLS
/// handshake, if any), keeps what ended it, holds inbound payloads until a receiver is given, reports the end once,
/// writes payloads down the pipeline on the connection's behalf, and moves the channel's water marks as
/// <see cref="WriteBufferMarks"/> says.
/// </summary>
/// <remarks>
/// Every member runs on the channel's event loop, except <see cref="Ready"/>, which any thread may await, and
/// <see cref="EndWithoutLoop"/>, which runs once the loop has terminated.
/// </remarks>
internal sealed class DotNettyPipelineTail : ChannelHandlerAdapter
{
    private readonly TaskCompletionSource _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly PeerJudge? _judge;
    private readonly Action _onEnded;
    private readonly WriteBufferMarks _marks;
    private IChannelHandlerContext? _context;
    private long _written;
    private Task _lastWrite = Task.CompletedTask;
    private IPayloadReceiver? _receiver;
    private List<ByteString>? _held;
    private bool _ended;

    // 1 once the receiver heard the end: from the channel, or from a loop that terminated under the connection.
    private int _reported;

    /// <param name="settings">The connection's settings: its water marks, which the channel starts with.</param>
    /// <param name="judge">Judges the peer's certificate: given with TLS, so that a failed handshake says why.</param>
    /// <param name="onEnded">Called once when the channel goes inactive, before the receiver hears of it.</param>
    public DotNettyPipelineTail(ConnectionSettings settings, PeerJudge? judge, Action onEnded)
    {
        _judge = judge;
        _onEnded = onEnded;
        _marks = new WriteBufferMarks(settings);

        // A channel that ends before set-up faults Ready; whoever awaited it may have given up already (a handshake
        // past its bound), and a fault nobody observes would surface as an UnobservedTaskException.
        _ready.Task.ContinueWith(static ready => _ = ready.Exception, CancellationToken.None, TaskContinuationOptions.OnlyOnFaulted | TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
    }

    /// <summary>Completes once the connection (and its TLS handshake) is up; fails if it ends before.</summary>
    public Task Ready => _ready.Task;

    /// <summary>What ended the connection, or will: <c>null</c> for an orderly close.</summary>
    public Exception? Failure { get; private set; }

    /// <summary>Delivers the payloads held, then every later one, to <paramref name="receiver"/>, and turns reads on.</summary>
    public void StartReading(IChannel channel, IPayloadReceiver receiver)
    {
        _receiver = receiver;
        foreach (var held in _held ?? [])
        {
            receiver.OnPayload(held);
        }

        _held = null;
        if (_ended)
        {
            ReportEnd(receiver);
            return;
        }

        channel.Configuration.AutoRead = true;
        channel.Read();
    }

    /// <summary>
    /// On the event loop: writes down the pipeline every payload <paramref name="queue"/> holds, then flushes, which ends
    /// the burst for <c>BatchingWriterHandler</c> (made with <c>ExplicitFlushEndsBurst</c>), as the core's send loop
    /// ends one when it finds its queue empty. While the queue delay is heard, a <see cref="WritesQueuedSince"/> goes
    /// first, so that the delay counts from when the write that asked for this hand-off was queued.
    /// </summary>
    public void WriteQueued(DotNettyWriteQueue queue)
    {
        if (!_ended && queue.WaitingSince is var since and not 0)
        {
            _context!.WriteAsync(new WritesQueuedSince(since));
        }

        try
        {
            queue.HandOff(this, static (tail, payload) => tail.Write(payload));
        }
        finally
        {
            // A write that threw ends the hand-off too: what it wrote before goes out, and later writes are not left
            // waiting for a burst end nobody will report.
            _context?.Flush();
            ObserveSending();
        }
    }

    /// <summary>Writes one payload down the pipeline, wrapped, not copied; <c>BatchingWriterHandler</c> frames it.</summary>
    /// <remarks>
    /// A write fails when its channel closes first (an abort past the close bound, a reset), and nobody else awaits it:
    /// each write task is observed here, or its failure would surface as an UnobservedTaskException. Combined writes
    /// share one task per batch, so this costs a continuation per batch, not per payload.
    /// </remarks>
    private void Write(ByteString payload)
    {
        // Accepted just before the channel ended, handed off after: nothing can be written now, and the write's failed
        // task would come after the end observed the last one.
        if (_ended)
        {
            return;
        }

        _written += payload.Length + FramingSettings.HeaderLength;
        var written = _context!.WriteAsync(Wrap(payload));
        if (!ReferenceEquals(written, _lastWrite))
        {
            ObservedTasks.Observe(_lastWrite);
            _lastWrite = written;
        }
    }

    /// <summary>
    /// After a hand-off, and as the channel turns unwritable and writable: what the channel has sent so far (what was
    /// written less what its outbound buffer holds) goes to <see cref="WriteBufferMarks"/>, and the channel's water
    /// marks move when they do.
    /// </summary>
    public void ObserveSending()
    {
        if (_context?.Channel is not { } channel)
        {
            return;
        }

        var unsent = channel.Unsafe.OutboundBuffer?.TotalPendingWriteBytes() ?? 0;
        if (!_marks.Observe(_written - unsent, unsent))
        {
            return;
        }

        // The outbound buffer compares against both on this event loop, so it never sees one moved without the other.
        channel.Configuration.WriteBufferHighWaterMark = (int)_marks.High;
        channel.Configuration.WriteBufferLowWaterMark = (int)_marks.Low;
    }

    /// <summary>Closes the channel at once, telling the receiver <paramref name="reason"/> ended it (<c>null</c>: in order).</summary>
    public void Abort(Exception? reason)
    {
        Failure ??= reason;
        if (_context is { } context)
        {
            ObservedTasks.Observe(context.Channel.CloseAsync());
        }
    }

    /// <summary>Flushes what was written, and closes the channel once the last write is on the wire.</summary>
    public void FlushThenClose(IChannel channel)
    {
        _context?.Flush();
        _lastWrite.ContinueWith(
            static (written, channel) =>
            {
                _ = written.Exception;
                ObservedTasks.Observe(((IChannel)channel!).CloseAsync());
            },
            channel, TaskScheduler.Default);
    }

    /// <summary>
    /// Once the event loop has terminated without running a task the connection gave it, so that no task of this handler
    /// runs again: the connection ends with <paramref name="reason"/> (<c>null</c>: in order), and the receiver, this one
    /// or the one reading started with, hears it once, as it would have from the channel.
    /// </summary>
    public void EndWithoutLoop(Exception? reason, IPayloadReceiver? receiver)
    {
        Failure ??= reason;
        _ready.TrySetException(Failure ?? new IOException("The connection ended before it was set up: its event loop stopped."));
        if ((_receiver ??= receiver) is { } reader)
        {
            ReportEnd(reader);
        }
    }

    public override void HandlerAdded(IChannelHandlerContext context) => _context = context;

    public override void ChannelActive(IChannelHandlerContext context)
    {
        if (_judge is null)
        {
            _ready.TrySetResult();
        }
        else
        {
            // Reads are off until Akka registers its read handler, but the handshake needs them: ask for the first.
            context.Read();
        }

        context.FireChannelActive();
    }

    public override void UserEventTriggered(IChannelHandlerContext context, object evt)
    {
        if (evt is TlsHandshakeCompletionEvent { IsSuccessful: true })
        {
            _ready.TrySetResult();
        }
        else if (evt is TlsHandshakeCompletionEvent failed)
        {
            Failure = _judge!.Explain(failed.Exception);
        }

        context.FireUserEventTriggered(evt);
    }

    public override void ChannelRead(IChannelHandlerContext context, object message)
    {
        var payload = (ByteString)message;
        if (_receiver is { } receiver)
        {
            receiver.OnPayload(payload);
        }
        else
        {
            (_held ??= []).Add(payload);
        }
    }

    public override void ChannelWritabilityChanged(IChannelHandlerContext context)
    {
        ObserveSending();
        context.FireChannelWritabilityChanged();
    }

    public override void ExceptionCaught(IChannelHandlerContext context, Exception exception)
    {
        Failure ??= exception;
        ObservedTasks.Observe(context.CloseAsync());
    }

    public override void ChannelInactive(IChannelHandlerContext context)
    {
        _ended = true;
        ObservedTasks.Observe(_lastWrite);
        _onEnded();
        _ready.TrySetException(Failure ?? new IOException($"The connection {context.Channel.LocalAddress} -> {context.Channel.RemoteAddress} closed before it was set up."));
        if (_receiver is { } receiver)
        {
            ReportEnd(receiver);
        }

        context.FireChannelInactive();
    }

    private void ReportEnd(IPayloadReceiver receiver)
    {
        if (Interlocked.Exchange(ref _reported, 1) == 0)
        {
            receiver.OnClosed(Failure);
        }
    }

    // The payload's own array, wrapped: BatchingWriterHandler copies a small one once into its combine buffer and
    // sends a large one as it is.
    private static IByteBuffer Wrap(ByteString payload) =>
        MemoryMarshal.TryGetArray(payload.Memory, out var segment)
            ? Unpooled.WrappedBuffer(segment.Array, segment.Offset, segment.Count)
            : Unpooled.WrappedBuffer(payload.ToByteArray());
}
