using System.Buffers.Binary;
using FlushBatching.Framing;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Io;

namespace FlushBatching.Tests.Support;

/// <summary>
/// A peer that takes every byte, for the send path without a socket: each send is copied out before it completes, and
/// what it carried (segments, frames, bytes) is kept. Every third send completes after a yield, as a socket's may.
/// </summary>
internal sealed class RecordingIo : ConnectionIo
{
    private readonly MemoryStream _sent = new();
    private readonly List<(int Segments, int Frames, long Bytes)> _sends = [];
    private int _frames;

    /// <summary>Frames sent so far; read from any thread.</summary>
    public int Frames => Volatile.Read(ref _frames);

    /// <summary>Every byte sent, in order.</summary>
    public byte[] Sent
    {
        get
        {
            lock (_sends)
            {
                return _sent.ToArray();
            }
        }
    }

    /// <summary>What each send carried, in order.</summary>
    public (int Segments, int Frames, long Bytes)[] Sends
    {
        get
        {
            lock (_sends)
            {
                return [.. _sends];
            }
        }
    }

    /// <summary>When set, sends throw this once the given number of sends have completed.</summary>
    public (int After, Exception Error)? Failure { get; init; }

    public override ValueTask<int> ReceiveAsync(Memory<byte> buffer) => ValueTask.FromResult(0);

    public override async ValueTask SendAsync(List<ArraySegment<byte>> frames, long bytes)
    {
        int count;
        lock (_sends)
        {
            count = _sends.Count;
        }

        if (Failure is { } failure && count >= failure.After)
        {
            throw failure.Error;
        }

        if ((count + 1) % 3 == 0)
        {
            await Task.Yield();
        }

        long copied = 0;
        var framesInSend = 0;
        lock (_sends)
        {
            foreach (var segment in frames)
            {
                _sent.Write(segment);
                copied += segment.Count;
                for (var at = 0; at < segment.Count; framesInSend++)
                {
                    at += FramingSettings.HeaderLength + BinaryPrimitives.ReadInt32LittleEndian(segment.AsSpan(at));
                }
            }

            _sends.Add((frames.Count, framesInSend, bytes));
        }

        Interlocked.Add(ref _frames, framesInSend);
        Assert.Equal(bytes, copied);
    }

    public override ValueTask ShutdownSendAsync() => ValueTask.CompletedTask;

    public override void Dispose() => _sent.Dispose();
}
