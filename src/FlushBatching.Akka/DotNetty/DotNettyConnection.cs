using System.Collections.Concurrent;
using System.Net;
using System.Net.Security;
using System.Runtime.InteropServices;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using DotNetty.Buffers;
using DotNetty.Common.Concurrency;
using DotNetty.Handlers.Tls;
using DotNetty.Transport.Channels;
using FlushBatching.Framing;
using FlushBatching.Tcp;
using TlsSettings = FlushBatching.Tcp.TlsSettings;
using Google.Protobuf;

namespace FlushBatching.Akka;

/// <summary>
/// A DotNetty channel as the adapter's <see cref="ITransportConnection"/>, and the last handler of its pipeline.
/// <see cref="TryWrite"/> puts Akka's payload (an immutable ByteString, not a copy) on a queue and, only when the
/// queue was idle, schedules one drain on the channel's event loop; the drain hands each payload down the pipeline
/// wrapped, not copied, and <c>BatchingWriterHandler</c> writes its length prefix, combines small frames with one copy,
/// passes large ones through and decides the flushes.
/// </summary>
/// <remarks>
/// State is touched on the channel's event loop, except the write queue, its byte count and its flag. Reads stay off
/// until the adapter calls <see cref="StartReading"/>; what TLS reads around its handshake before that is held.
/// </remarks>
internal sealed class DotNettyConnection : ChannelHandlerAdapter, ITransportConnection
{
    private static readonly Action<object> DrainTask = static state => ((DotNettyConnection)state).Drain();
    private static readonly Action<object> CloseTask = static state => ((DotNettyConnection)state).DrainThenClose();

    private readonly IChannel _channel;
    private readonly ConnectionSettings _settings;
    private readonly TaskCompletionSource<DotNettyConnection> _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly ConcurrentQueue<ByteString> _queue = new();
    private int _drainScheduled;
    private long _queuedBytes;
    private IChannelHandlerContext? _context;
    private Task _lastWrite = Task.CompletedTask;
    private IPayloadReceiver? _receiver;
    private List<ByteString>? _held;
    private Exception? _failure;
    private string? _refusal;
    private bool _ended;

    public DotNettyConnection(IChannel channel, ConnectionSettings settings)
    {
        _channel = channel;
        _settings = settings;
    }

    /// <summary>Completes once the connection (and its TLS handshake) is up; fails if it ends before.</summary>
    public Task<DotNettyConnection> Ready => _ready.Task;

    public IPEndPoint LocalEndPoint => Unmapped(_channel.LocalAddress);

    public IPEndPoint RemoteEndPoint => Unmapped(_channel.RemoteAddress);

    public Task Completion => _channel.CloseCompletion;

    /// <summary>The event loop the channel runs on; tests hold it busy.</summary>
    internal IEventLoop EventLoop => _channel.EventLoop;

    public bool TryWrite(ByteString payload)
    {
        FrameEncoder.EnsurePayloadFits(payload.Length, _settings.Framing);
        if (!_channel.Open)
        {
            return false;
        }

        // Unsent bytes are those queued here for the event loop and those in the channel's outbound buffer: a write
        // is refused once they pass the high-water mark, even while a busy event loop has not drained this queue.
        if (!_channel.IsWritable || Volatile.Read(ref _queuedBytes) > (_channel.Unsafe.OutboundBuffer?.BytesBeforeUnwritable() ?? 0))
        {
            _settings.Metrics.RecordRefused();
            return false;
        }

        Interlocked.Add(ref _queuedBytes, FrameLength(payload));
        _queue.Enqueue(payload);
        if (Interlocked.Exchange(ref _drainScheduled, 1) == 0)
        {
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
        }

        return true;
    }

    public void StartReading(IPayloadReceiver receiver)
    {
        try
        {
            _channel.EventLoop.Execute(() =>
            {
                _receiver = receiver;
                foreach (var held in _held ?? [])
                {
                    receiver.OnPayload(held);
                }

                _held = null;
                if (_ended)
                {
                    receiver.OnClosed(_failure);
                    return;
                }

                _channel.Configuration.AutoRead = true;
                _channel.Read();
            });
        }
        catch (RejectedExecutionException)
        {
            receiver.OnClosed(_failure);
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
                // The event loop shut down under this call: it closed the channel as it went.
            }
        }

        return Completion;
    }

    public void Abort() => _channel.CloseAsync();

    /// <summary>Judges the peer's certificate by the connection's <see cref="TlsSettings"/>, keeping the reason of a refusal.</summary>
    public bool JudgePeer(object sender, X509Certificate? certificate, X509Chain? chain, SslPolicyErrors errors)
    {
        _refusal = _settings.Tls!.Judge(certificate, chain, errors, _channel.RemoteAddress?.ToString() ?? "the peer");
        return _refusal is null;
    }

    public override string ToString() => $"{_channel.LocalAddress} -> {_channel.RemoteAddress}";

    /// <summary>An endpoint as the core's sockets name it: DotNetty's dual-mode sockets give IPv4 peers as IPv6-mapped addresses.</summary>
    internal static IPEndPoint Unmapped(EndPoint endpoint)
    {
        var ip = (IPEndPoint)endpoint;
        return ip.Address.IsIPv4MappedToIPv6 ? new IPEndPoint(ip.Address.MapToIPv4(), ip.Port) : ip;
    }

    public override void HandlerAdded(IChannelHandlerContext context) => _context = context;

    public override void ChannelActive(IChannelHandlerContext context)
    {
        if (_settings.Tls is null)
        {
            _ready.TrySetResult(this);
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
            _ready.TrySetResult(this);
        }
        else if (evt is TlsHandshakeCompletionEvent failed)
        {
            // As the core's sockets say it: the reason the certificate was refused, when one was.
            _failure = _refusal is null ? failed.Exception : new AuthenticationException(_refusal, failed.Exception);
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

    public override void ExceptionCaught(IChannelHandlerContext context, Exception exception)
    {
        _failure ??= exception;
        context.CloseAsync();
    }

    public override void ChannelInactive(IChannelHandlerContext context)
    {
        _ended = true;
        _queue.Clear();
        _ready.TrySetException(_failure ?? new IOException($"The connection {this} closed before it was set up."));
        _receiver?.OnClosed(_failure);
        context.FireChannelInactive();
    }

    private void Drain()
    {
        // Clear the flag before taking payloads: a write racing with this drain either is taken below or schedules anew.
        Volatile.Write(ref _drainScheduled, 0);

        // The bytes taken are uncounted once per drain, and after each batch's worth in a long one, not per payload:
        // a count the writing thread and this loop both changed per message would move between their cores each time.
        long taken = 0;
        while (_queue.TryDequeue(out var payload))
        {
            taken += FrameLength(payload);
            _lastWrite = _context!.WriteAsync(Wrap(payload));
            if (taken >= _settings.Batching.MaxPendingBytes)
            {
                Interlocked.Add(ref _queuedBytes, -taken);
                taken = 0;
            }
        }

        Interlocked.Add(ref _queuedBytes, -taken);
    }

    private static long FrameLength(ByteString payload) => payload.Length + FramingSettings.HeaderLength;

    // The payload's own array, wrapped: BatchingWriterHandler copies a small one once into its combine buffer and
    // sends a large one as it is.
    private static IByteBuffer Wrap(ByteString payload) =>
        MemoryMarshal.TryGetArray(payload.Memory, out var segment)
            ? Unpooled.WrappedBuffer(segment.Array, segment.Offset, segment.Count)
            : Unpooled.WrappedBuffer(payload.ToByteArray());

    private void DrainThenClose()
    {
        Drain();
        _context?.Flush();
        _lastWrite.ContinueWith(static (_, channel) => ((IChannel)channel!).CloseAsync(), _channel, TaskScheduler.Default);
    }
}
