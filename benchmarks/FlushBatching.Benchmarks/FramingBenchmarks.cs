using System.Buffers;
using BenchmarkDotNet.Attributes;
using FlushBatching.Framing;

namespace FlushBatching.Benchmarks;

/// <summary>Encoding one frame (prefix and payload into one buffer) and decoding a run of frames from one buffer.</summary>
[MemoryDiagnoser]
public class FramingBenchmarks
{
    private const int Frames = 100;

    private byte[] _payload = null!;
    private byte[] _frame = null!;
    private ReadOnlySequence<byte> _encoded;

    [Params(16, 200, 1024, 8192)]
    public int PayloadSize { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _payload = new byte[PayloadSize];
        _frame = new byte[PayloadSize + FramingSettings.HeaderLength];
        var encoded = new byte[Frames * _frame.Length];
        for (var i = 0; i < Frames; i++)
        {
            Encode(_payload, encoded.AsSpan(i * _frame.Length));
        }

        _encoded = new ReadOnlySequence<byte>(encoded);
    }

    // What the sockets stack does per frame: check the size, write the prefix, copy the payload behind it.
    [Benchmark(Baseline = true)]
    public int Encode() => Encode(_payload, _frame);

    [Benchmark(OperationsPerInvoke = Frames)]
    public long Decode()
    {
        var buffer = _encoded;
        long bytes = 0;
        while (FrameDecoder.TryReadFrame(ref buffer, FramingSettings.Default, out var payload))
        {
            bytes += payload.Length;
        }

        return bytes;
    }

    private static int Encode(ReadOnlySpan<byte> payload, Span<byte> destination)
    {
        FrameEncoder.EnsurePayloadFits(payload.Length, FramingSettings.Default);
        FrameEncoder.WriteHeader(destination, payload.Length, FramingSettings.Default.ByteOrder);
        payload.CopyTo(destination[FramingSettings.HeaderLength..]);
        return payload.Length + FramingSettings.HeaderLength;
    }
}
