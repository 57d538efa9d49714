using System.Buffers;
using FlushBatching.Framing;

namespace FlushBatching.Fuzz;

/// <summary>
/// The fuzz targets: each takes any bytes and either handles them or throws what a peer's bad bytes deserve
/// (<see cref="InvalidFrameException"/>); anything else, or a broken invariant (<see cref="FuzzInvariantException"/>),
/// is a finding. Run under AFL++ by <c>tools/fuzz.sh</c>; every file of each target's corpus is replayed as an ordinary
/// test in CI.
/// </summary>
public static class FuzzTargets
{
    /// <summary>Every target by the name <c>tools/fuzz.sh</c> and the corpus folders use.</summary>
    public static IReadOnlyDictionary<string, Action<byte[]>> All { get; } = new Dictionary<string, Action<byte[]>>
    {
        ["frame-decoder"] = FrameDecoderTarget,
    };

    private static readonly long[] MaximumFrameSizes = [FramingSettings.MinimumMaximumFrameSize, FramingSettings.DefaultMaximumFrameSize, 4_000_000, int.MaxValue];

    /// <summary>
    /// <see cref="FrameDecoder"/> over bytes from a peer. Byte 0 picks the byte order (bit 0) and the class of
    /// <c>maximum-frame-size</c> (bits 1–2: the smallest allowed, the default, 4 MB, the largest); byte 1 seeds where the
    /// rest is cut into segments, as reads would cut it. Every frame decoded must be whole, within the limit, and its
    /// prefix must match; what is left must be less than a frame.
    /// </summary>
    public static void FrameDecoderTarget(byte[] input)
    {
        if (input.Length < 2)
        {
            return;
        }

        var settings = FramingSettings.Default
            .WithByteOrder((input[0] & 1) == 0 ? ByteOrder.LittleEndian : ByteOrder.BigEndian)
            .WithMaximumFrameSize(MaximumFrameSizes[(input[0] >> 1) & 3]);
        var bytes = input.AsMemory(2);
        var buffer = Segmented(bytes, input[1]);
        var consumed = 0L;
        try
        {
            while (FrameDecoder.TryReadFrame(ref buffer, settings, out var payload))
            {
                var header = bytes.Span.Slice((int)consumed, FramingSettings.HeaderLength);
                Require(FrameDecoder.ReadLength(header, settings) == payload.Length, "the payload's length is not the prefix's");
                Require(payload.Length <= settings.MaximumPayloadSize, "a payload above maximum-frame-size");
                Require(payload.ToArray().AsSpan().SequenceEqual(bytes.Span.Slice((int)consumed + FramingSettings.HeaderLength, (int)payload.Length)),
                    "the payload's bytes are not the frame's");
                consumed += FramingSettings.HeaderLength + payload.Length;
                Require(buffer.Length == bytes.Length - consumed, "the buffer did not move past the frame exactly");
            }

            Require(buffer.Length < FramingSettings.HeaderLength ||
                buffer.Length - FramingSettings.HeaderLength < FrameDecoder.ReadLength(buffer.FirstSpan.Length >= 4 ? buffer.FirstSpan : buffer.Slice(0, 4).ToArray(), settings),
                "a whole frame was left undecoded");
        }
        catch (InvalidFrameException)
        {
            // A prefix out of range: the connection is dropped; nothing to check.
        }
    }

    // The bytes as a sequence of segments whose lengths follow from the seed: one to many, empty ones included.
    private static ReadOnlySequence<byte> Segmented(ReadOnlyMemory<byte> bytes, byte seed)
    {
        if (seed == 0 || bytes.Length == 0)
        {
            return new ReadOnlySequence<byte>(bytes);
        }

        var random = new Random(seed);
        Segment? first = null, last = null;
        for (var at = 0; at < bytes.Length;)
        {
            var length = Math.Min(random.Next(0, 9) == 0 ? 0 : random.Next(1, 1 + (seed % 16) * 4), bytes.Length - at);
            var segment = new Segment(bytes.Slice(at, length), last);
            first ??= segment;
            last = segment;
            at += length;
        }

        return new ReadOnlySequence<byte>(first!, 0, last!, last!.Memory.Length);
    }

    private static void Require(bool holds, string what)
    {
        if (!holds)
        {
            throw new FuzzInvariantException(what);
        }
    }

    private sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        public Segment(ReadOnlyMemory<byte> memory, Segment? previous)
        {
            Memory = memory;
            if (previous is not null)
            {
                RunningIndex = previous.RunningIndex + previous.Memory.Length;
                previous.Next = this;
            }
        }
    }
}
