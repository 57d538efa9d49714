using DotNetty.Handlers.Tls;
using DotNetty.Transport.Channels;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Tls;
using Google.Protobuf;

namespace FlushBatching.Akka.DotNettyStack;

/// <summary>
/// The last handler of a <see cref="DotNettyConnection"/>'s pipeline, what its reader sees: when the connection is up
/// (after its TLS handshake, if any), the payloads, held until a receiver is given, and the end, reported once with what
/// caused it. Writing is the <see cref="DotNetty.QueuedChannelWriter"/>'s, before it in the pipeline.
/// </summary>
/// <remarks>
/// Every member runs on the channel's event loop, except <see cref="Ready"/>, which any thread may await, and
/// <see cref="EndWithoutLoop"/>, which runs once the loop has terminated.
/// </remarks>
internal sealed class DotNettyReadGate : ChannelHandlerAdapter
{
    private readonly TaskCompletionSource _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly PeerJudge? _judge;
    private IPayloadReceiver? _receiver;
    private List<ByteString>? _held;
    private bool _ended;

    // 1 once the receiver heard the end: from the channel, or from a loop that terminated under the connection.
    private int _reported;

    /// <param name="judge">Judges the peer's certificate: given with TLS, so that a failed handshake says why.</param>
    public DotNettyReadGate(PeerJudge? judge)
    {
        _judge = judge;

        // A channel that ends before set-up faults Ready; whoever awaited it may have given up already (a handshake
        // past its bound), and a fault nobody observes would surface as an UnobservedTaskException.
        ObservedTasks.Observe(_ready.Task);
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

    /// <summary>A payload from <see cref="DotNetty.PayloadFrameDecoder"/>, its own array: wrapped as Akka's ByteString, not copied.</summary>
    public override void ChannelRead(IChannelHandlerContext context, object message)
    {
        var payload = UnsafeByteOperations.UnsafeWrap((byte[])message);
        if (_receiver is { } receiver)
        {
            receiver.OnPayload(payload);
        }
        else
        {
            (_held ??= []).Add(payload);
        }
    }

    /// <summary>What ended the connection (a bad frame, a reset, a close past its bound) is kept for the reader; the channel closes.</summary>
    public override void ExceptionCaught(IChannelHandlerContext context, Exception exception)
    {
        Failure ??= exception;
        ObservedTasks.Observe(context.CloseAsync());
    }

    public override void ChannelInactive(IChannelHandlerContext context)
    {
        _ended = true;
        _ready.TrySetException(Failure ?? new IOException($"The connection {PeerEndPoints.Describe(context.Channel.LocalAddress, context.Channel.RemoteAddress)} closed before it was set up."));
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
}
