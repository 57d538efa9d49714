using System.Collections.Concurrent;
using System.Runtime.InteropServices;
using Akka.Actor;
using Akka.Remote.Transport;
using DotNetty.Buffers;
using DotNetty.Common.Concurrency;
using DotNetty.Transport.Channels;
using FlushBatching.Diagnostics;
using Google.Protobuf;
using FramingByteOrder = FlushBatching.Framing.ByteOrder;

namespace FlushBatching.Akka;

/// <summary>
/// One association over a DotNetty channel. <see cref="Write"/> puts the payload (Akka's immutable ByteString, not a
/// copy) on a queue and, only when the queue was idle, schedules one drain on the channel's event loop; the drain
/// frames each payload into one buffer (length prefix and payload) and writes it, and the pipeline's
/// <c>BatchingWriterHandler</c> combines the frames and decides the flushes.
/// </summary>
internal sealed class DotNettyAssociationHandle : AssociationHandle
{
    private static readonly Action<object> DrainTask = static state => ((DotNettyAssociationHandle)state).Drain();
    private static readonly Action<object> CloseTask = static state => ((DotNettyAssociationHandle)state).DrainThenClose();

    private readonly IChannel _channel;
    private readonly FramingByteOrder _byteOrder;
    private readonly FlushBatchingMetrics _metrics;
    private readonly ConcurrentQueue<ByteString> _queue = new();
    private readonly DotNettyFramePool _frames;
    private int _drainScheduled;
    private Task _lastWrite = Task.CompletedTask;

    public DotNettyAssociationHandle(Address localAddress, Address remoteAddress, IChannel channel, FramingByteOrder byteOrder, FlushBatchingMetrics metrics)
        : base(localAddress, remoteAddress)
    {
        _channel = channel;
        _byteOrder = byteOrder;
        _metrics = metrics;
        _frames = new DotNettyFramePool(channel.EventLoop);
    }

    /// <summary>Queues <paramref name="payload"/> as it is; the drain on the event loop frames it into one buffer (one copy).</summary>
    /// <returns><c>false</c> while the channel is closed or not writable: Akka buffers and retries.</returns>
    public override bool Write(ByteString payload)
    {
        if (!_channel.Open)
        {
            return false;
        }

        if (!_channel.IsWritable)
        {
            _metrics.RecordRefused();
            return false;
        }

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
                ReleaseQueued();
                return false;
            }
        }

        return true;
    }

#pragma warning disable CS0672, CS0618 // Akka.Remote's SPI: the overload with a reason calls this one.
    /// <summary>Writes and flushes what is queued, waits until it is on the wire, then closes.</summary>
    public override void Disassociate()
    {
        if (_channel.Open && !_channel.EventLoop.IsShuttingDown)
        {
            _channel.EventLoop.Execute(CloseTask, this);
        }
    }
#pragma warning restore CS0672, CS0618

    /// <summary>Drops payloads that never reached the channel; called once the channel is inactive.</summary>
    public void ReleaseQueued() => _queue.Clear();

    private void Drain()
    {
        // Clear the flag before taking frames: a Write racing with this drain either is taken below or schedules anew.
        Volatile.Write(ref _drainScheduled, 0);
        while (_queue.TryDequeue(out var payload))
        {
            _lastWrite = _channel.WriteAsync(Frame(payload));
        }
    }

    // On the event loop: the frame's buffer comes from the channel's frame pool, and BatchingWriterHandler, on the
    // same loop, copies it into its combine buffer and releases it back there (or sends it as it is, alone in its batch).
    private IByteBuffer Frame(ByteString payload)
    {
        var length = payload.Length;
        var frame = _frames.Rent(4 + length);
        if (_byteOrder == FramingByteOrder.BigEndian)
        {
            frame.WriteInt(length);
        }
        else
        {
            frame.WriteIntLE(length);
        }

        if (MemoryMarshal.TryGetArray(payload.Memory, out var segment))
        {
            frame.WriteBytes(segment.Array, segment.Offset, segment.Count);
        }
        else
        {
            frame.WriteBytes(payload.ToByteArray());
        }

        return frame;
    }

    private void DrainThenClose()
    {
        Drain();
        _channel.Flush();
        _lastWrite.ContinueWith(static (_, channel) => ((IChannel)channel!).CloseAsync(), _channel, TaskScheduler.Default);
    }
}
