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
/// (an immutable ByteString, not a copy) on a <see cref="DotNettyWriteQueue"/> and, only when no drain is due,
/// schedules one on the channel's event loop; the drain hands each payload to the pipeline's
/// <see cref="DotNettyPipelineTail"/>, and <c>BatchingWriterHandler</c> writes its length prefix, combines small frames
/// with one copy, passes large ones through and decides the flushes.
/// </summary>
/// <remarks>
/// Reads stay off until the adapter calls <see cref="StartReading"/>; what TLS reads around its handshake before that
/// is held by the tail.
/// </remarks>
internal sealed class DotNettyConnection : ITransportConnection
{
    private static readonly Action<object> DrainTask = static state => ((DotNettyConnection)state).Drain();
    private static readonly Action<object> CloseTask = static state => ((DotNettyConnection)state).DrainThenClose();

    private readonly IChannel _channel;
    private readonly FramingSettings _framing;
    private readonly Diagnostics.FlushBatchingMetrics _metrics;
    private readonly DotNettyWriteQueue _queue;
    private readonly BatchingWriterHandler _batching;

    /// <param name="channel">The channel, its pipeline not built yet.</param>
    /// <param name="settings">The connection's settings.</param>
    /// <param name="judge">With TLS, what judges the peer's certificate in the handshake; <c>null</c> without.</param>
    /// <param name="batching">The pipeline's batching handler, told when each drain's payloads were queued.</param>
    public DotNettyConnection(IChannel channel, ConnectionSettings settings, PeerJudge? judge, BatchingWriterHandler batching)
    {
        _channel = channel;
        _framing = settings.Framing;
        _metrics = settings.Metrics;
        _queue = new DotNettyWriteQueue(settings.TimeProvider);
        _batching = batching;
        Tail = new DotNettyPipelineTail(judge, _queue.Clear);
    }

    /// <summary>The handler to put last in the channel's pipeline.</summary>
    public DotNettyPipelineTail Tail { get; }

    /// <summary>Completes once the connection (and its TLS handshake) is up; fails if it ends before.</summary>
    public Task Ready => Tail.Ready;

    public IPEndPoint LocalEndPoint => Unmapped(_channel.LocalAddress);

    public IPEndPoint RemoteEndPoint => Unmapped(_channel.RemoteAddress);

    public Task Completion => _channel.CloseCompletion;

    /// <summary>The event loop the channel runs on; tests hold it busy.</summary>
    internal IEventLoop EventLoop => _channel.EventLoop;

    public bool TryWrite(ByteString payload)
    {
        FrameEncoder.EnsurePayloadFits(payload.Length, _framing);
        if (!_channel.Open)
        {
            return false;
        }

        // Unsent bytes are those queued here for the event loop and those in the channel's outbound buffer: a write
        // is refused once they pass the high-water mark, even while a busy event loop has not drained the queue.
        var room = _channel.IsWritable ? _channel.Unsafe.OutboundBuffer?.BytesBeforeUnwritable() ?? 0 : -1;
        switch (_queue.TryEnqueue(payload, room))
        {
            case DotNettyWriteQueue.Outcome.Refused:
                _metrics.RecordRefused();
                return false;
            case DotNettyWriteQueue.Outcome.QueuedDrainNeeded:
                try
                {
                    _channel.EventLoop.Execute(DrainTask, this);
                }
                catch (RejectedExecutionException)
                {
                    // The transport shut its event loops down under this write: the channel is gone.
                    _queue.Clear();
                    return false;
                }

                break;
        }

        return true;
    }

    public void StartReading(IPayloadReceiver receiver)
    {
        try
        {
            _channel.EventLoop.Execute(() => Tail.StartReading(_channel, receiver));
        }
        catch (RejectedExecutionException)
        {
            receiver.OnClosed(Tail.Failure);
        }
    }

    /// <summary>Writes and flushes what is queued, waits until it is on the wire, then closes.</summary>
    public Task CloseAsync()
    {
        if (_channel.Open)
        {
            try
            {
                _channel.EventLoop.Execute(CloseTask, this);
            }
            catch (RejectedExecutionException)
            {
                // The event loop shut down under this call; the stack closed its channels before it stopped the loop.
            }
        }

        return Completion;
    }

    public void Abort() => _channel.CloseAsync();

    public override string ToString() => $"{_channel.LocalAddress} -> {_channel.RemoteAddress}";

    /// <summary>An endpoint as the core's sockets name it: DotNetty's dual-mode sockets give IPv4 peers as IPv6-mapped addresses.</summary>
    internal static IPEndPoint Unmapped(EndPoint endpoint)
    {
        var ip = (IPEndPoint)endpoint;
        return ip.Address.IsIPv4MappedToIPv6 ? new IPEndPoint(ip.Address.MapToIPv4(), ip.Port) : ip;
    }

    // The queue delay of what this drain writes counts from when the write that asked for it was queued.
    private void Drain()
    {
        _batching.QueuedSince = _queue.WaitingSince;
        _queue.Drain(Tail, static (tail, payload) => tail.Write(payload));
        _batching.QueuedSince = 0;
    }

    private void DrainThenClose()
    {
        Drain();
        Tail.FlushThenClose(_channel);
    }
}
