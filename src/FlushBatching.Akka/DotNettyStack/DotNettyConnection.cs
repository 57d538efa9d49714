using System.Net;
using DotNetty.Transport.Channels;
using FlushBatching.DotNetty;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Tls;
using Google.Protobuf;

namespace FlushBatching.Akka.DotNettyStack;

/// <summary>
/// A DotNetty channel as the adapter's <see cref="ITransportConnection"/>, made of FlushBatching.DotNetty's public parts
/// as a user's pipeline would be: <see cref="TryWrite"/> and <see cref="CloseAsync"/> go to the channel's
/// <see cref="QueuedChannelWriter"/> (Akka's payload, an immutable ByteString, is written as it is, not copied), and what
/// the reader sees comes from the <see cref="DotNettyReadGate"/> at the pipeline's end.
/// </summary>
/// <remarks>
/// <para>
/// Reads stay off until the adapter calls <see cref="StartReading"/>, but for one read at once on an accepted channel,
/// which tells that the peer has spoken (<see cref="FirstByteWatch"/>); what that read and TLS's handshake bring before
/// reading starts is held by the gate.
/// </para>
/// <para>
/// Each fact has one owner: whether writes are taken, the close and its bound, and the unsent bytes are the writer's;
/// whether the connection is up, what ended it and the reader's hearing of it, the gate's; whether the channel is open,
/// DotNetty's. Neither calls the other: an event loop that terminated under a drain or a close is told to the gate
/// through the writer's callback, and the writer's abort at its bound reaches the gate down the pipeline.
/// </para>
/// </remarks>
internal sealed class DotNettyConnection : ITransportConnection
{
    private readonly IChannel _channel;

    /// <param name="channel">The channel, its pipeline not built yet.</param>
    /// <param name="settings">The connection's settings.</param>
    /// <param name="judge">With TLS, what judges the peer's certificate in the handshake; <c>null</c> without.</param>
    public DotNettyConnection(IChannel channel, ConnectionSettings settings, PeerJudge? judge)
    {
        _channel = channel;
        Gate = new DotNettyReadGate(judge);
        var gate = Gate;
        Writer = new QueuedChannelWriter(settings, reason => gate.EndWithoutLoop(reason, null));
    }

    /// <summary>The handler that writes, to put before <see cref="Gate"/> in the channel's pipeline.</summary>
    public QueuedChannelWriter Writer { get; }

    /// <summary>The handler to put last in the channel's pipeline.</summary>
    public DotNettyReadGate Gate { get; }

    /// <summary>Completes once the connection (and its TLS handshake) is up; fails if it ends before.</summary>
    public Task Ready => Gate.Ready;

    public IPEndPoint LocalEndPoint => PeerEndPoints.Of(_channel.LocalAddress);

    public IPEndPoint RemoteEndPoint => PeerEndPoints.Of(_channel.RemoteAddress);

    public Task Completion => _channel.CloseCompletion;

    /// <summary>Bytes accepted and not yet on the wire: queued for the event loop, or in the channel's outbound buffer.</summary>
    public long UnsentBytes => Writer.UnsentBytes;

    /// <summary>Unsent bytes above which writes are refused now; tests read it.</summary>
    internal long HighWaterMark => Writer.HighWaterMark;

    /// <summary>The event loop the channel runs on; tests hold it busy.</summary>
    internal IEventLoop EventLoop => _channel.EventLoop;

    public bool TryWrite(ByteString payload) => Writer.TryWrite(payload.Memory);

    public void StartReading(IPayloadReceiver receiver)
    {
        LoopTask.Execute(
            _channel.EventLoop,
            state => ((DotNettyConnection)state).Gate.StartReading(_channel, receiver),
            state => ((DotNettyConnection)state).Gate.EndWithoutLoop(LoopTask.Lost(state, "the start of its reads"), receiver),
            this);
    }

    /// <summary>
    /// Refuses writes from now on, writes and flushes what is queued, and closes once the last write is on the wire, or
    /// aborts at <see cref="ConnectionSettings.CloseTimeout"/> from this call, whichever comes first.
    /// </summary>
    public Task CloseAsync() => Writer.CloseAsync();

    /// <summary>Closes the channel at once; what it has not sent is dropped and its buffers released.</summary>
    public void Abort() => Writer.Abort();

    public override string ToString() => Writer.ToString();
}
