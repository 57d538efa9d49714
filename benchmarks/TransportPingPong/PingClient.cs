using System.Buffers;
using System.Buffers.Binary;
using System.Diagnostics;
using FlushBatching.Tcp;

namespace TransportPingPong;

/// <summary>
/// Keeps <c>inFlight</c> messages in flight on one connection until <c>messages</c> round trips are done,
/// recording each round trip's time into a buffer allocated up front, so the measured run allocates nothing.
/// </summary>
internal sealed class PingClient(int messages, int inFlight, int payloadSize) : IFrameHandler
{
    private readonly long[] _roundTrips = new long[messages];
    private readonly TaskCompletionSource _done = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _sent;
    private int _received;

    public Task Done => _done.Task;

    public ReadOnlySpan<long> RoundTripTicks => _roundTrips;

    public void Begin(FramedConnection connection)
    {
        for (var i = 0; i < inFlight && i < messages; i++)
        {
            Send(connection);
        }
    }

    public void OnFrame(FramedConnection connection, ReadOnlySequence<byte> payload)
    {
        Span<byte> stamp = stackalloc byte[sizeof(long)];
        payload.Slice(0, sizeof(long)).CopyTo(stamp);
        _roundTrips[_received] = Stopwatch.GetTimestamp() - BinaryPrimitives.ReadInt64LittleEndian(stamp);
        if (++_received == messages)
        {
            _done.TrySetResult();
        }
        else if (_sent < messages)
        {
            Send(connection);
        }
    }

    public void OnClosed(FramedConnection connection, Exception? reason)
    {
        if (_received < messages)
        {
            _done.TrySetException(new IOException($"Connection closed after {_received} of {messages} round trips.", reason));
        }
    }

    private void Send(FramedConnection connection)
    {
        Span<byte> payload = stackalloc byte[payloadSize];
        payload.Clear();
        BinaryPrimitives.WriteInt64LittleEndian(payload, Stopwatch.GetTimestamp());
        if (!connection.TryWrite(payload))
        {
            _done.TrySetException(new InvalidOperationException($"A write was refused at the high-water mark with {inFlight} messages in flight; raise write-buffer-high-water-mark."));
            return;
        }

        _sent++;
    }
}
