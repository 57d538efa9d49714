using System.Buffers;
using FlushBatching.Framing;

namespace FlushBatching.Tests.Framing;

public class FrameDecoderTests
{
    private static byte[] Encode(FramingSettings settings, params byte[][] payloads)
    {
        var stream = new MemoryStream();
        foreach (var payload in payloads)
        {
            var prefix = new byte[FramingSettings.HeaderLength];
            FrameEncoder.WriteHeader(prefix, payload.Length, settings.ByteOrder);
            stream.Write(prefix);
            stream.Write(payload);
        }

        return stream.ToArray();
    }

    private static List<byte[]> DecodeAll(ReadOnlySequence<byte> buffer, FramingSettings settings)
    {
        var frames = new List<byte[]>();
        while (FrameDecoder.TryReadFrame(ref buffer, settings, out var payload))
        {
            frames.Add(payload.ToArray());
        }

        Assert.True(buffer.IsEmpty);
        return frames;
    }

    [Fact]
    public void The_prefix_counts_the_payload_only_in_the_chosen_byte_order()
    {
        var little = Encode(FramingSettings.Default, [1, 2, 3]);
        Assert.Equal(new byte[] { 3, 0, 0, 0, 1, 2, 3 }, little);
        var big = Encode(FramingSettings.Default.WithByteOrder(ByteOrder.BigEndian), [1, 2, 3]);
        Assert.Equal(new byte[] { 0, 0, 0, 3, 1, 2, 3 }, big);
    }

    [Fact]
    public void Frames_split_at_every_point_across_segments_decode_whole()
    {
        var settings = FramingSettings.Default.WithByteOrder(ByteOrder.BigEndian);
        byte[][] payloads = [[], [7], [1, 2, 3, 4, 5, 6, 7, 8, 9], []];
        var bytes = Encode(settings, payloads);
        for (var first = 0; first <= bytes.Length; first++)
        {
            for (var second = first; second <= bytes.Length; second++)
            {
                var buffer = Segments.Of(bytes[..first], bytes[first..second], bytes[second..]);
                var frames = DecodeAll(buffer, settings);
                Assert.Equal(payloads, frames);
            }
        }
    }

    [Fact]
    public void An_incomplete_frame_waits_for_more_bytes()
    {
        var bytes = Encode(FramingSettings.Default, [1, 2, 3]);
        var buffer = new ReadOnlySequence<byte>(bytes[..6]);
        Assert.False(FrameDecoder.TryReadFrame(ref buffer, FramingSettings.Default, out _));
        Assert.Equal(6, buffer.Length);
    }

    [Fact]
    public void The_largest_payload_fits_and_one_byte_more_is_refused_on_both_sides()
    {
        var settings = FramingSettings.Default;
        var largest = new byte[settings.MaximumPayloadSize];
        Assert.Single(DecodeAll(new ReadOnlySequence<byte>(Encode(settings, largest)), settings));

        var e = Assert.Throws<ArgumentException>(() => FrameEncoder.EnsurePayloadFits(settings.MaximumPayloadSize + 1, settings));
        Assert.Contains("127997 bytes", e.Message);
        Assert.Contains("128000", e.Message);
    }

    [Theory]
    [InlineData(127997)]
    [InlineData(int.MaxValue)]
    [InlineData(-1)]
    [InlineData(int.MinValue)]
    public void A_bad_length_is_refused_from_the_prefix_alone(int announced)
    {
        var header = new byte[4];
        FrameEncoder.WriteHeader(header, announced, ByteOrder.LittleEndian);
        var buffer = new ReadOnlySequence<byte>(header);
        var e = Assert.Throws<InvalidFrameException>(() => FrameDecoder.TryReadFrame(ref buffer, FramingSettings.Default, out _));
        Assert.Contains(announced.ToString(System.Globalization.CultureInfo.InvariantCulture), e.Message);
    }

    [Theory]
    [InlineData(ByteOrder.LittleEndian)]
    [InlineData(ByteOrder.BigEndian)]
    public void ReadLength_reads_a_prefix_in_the_settings_byte_order_and_refuses_what_TryReadFrame_refuses(ByteOrder order)
    {
        var settings = FramingSettings.Default.WithByteOrder(order);
        var header = new byte[4];
        FrameEncoder.WriteHeader(header, settings.MaximumPayloadSize, order);
        Assert.Equal(settings.MaximumPayloadSize, FrameDecoder.ReadLength(header, settings));

        FrameEncoder.WriteHeader(header, settings.MaximumPayloadSize + 1, order);
        var e = Assert.Throws<InvalidFrameException>(() => FrameDecoder.ReadLength(header, settings));
        Assert.Contains(SettingKeys.MaximumFrameSize, e.Message);
    }

    private sealed class Segments : ReadOnlySequenceSegment<byte>
    {
        private Segments(byte[] bytes, long runningIndex)
        {
            Memory = bytes;
            RunningIndex = runningIndex;
        }

        public static ReadOnlySequence<byte> Of(params byte[][] parts)
        {
            var first = new Segments(parts[0], 0);
            var last = first;
            foreach (var part in parts.Skip(1))
            {
                var next = new Segments(part, last.RunningIndex + last.Memory.Length);
                last.Next = next;
                last = next;
            }

            return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
        }
    }

    [Theory]
    [InlineData(-1, "negative length -1")]
    [InlineData(127997, "a frame of 127997 bytes plus the 4-byte prefix, above maximum-frame-size = 128000b")]
    public void A_refused_length_says_which_way_it_is_wrong(int announced, string said)
    {
        var header = new byte[4];
        FrameEncoder.WriteHeader(header, announced, ByteOrder.LittleEndian);
        Assert.Contains(said, Assert.Throws<InvalidFrameException>(() => FrameDecoder.ReadLength(header, FramingSettings.Default)).Message);
    }

    [Fact]
    public void The_largest_payload_passes_the_writers_check_and_one_byte_more_is_refused_naming_both_sizes()
    {
        var settings = FramingSettings.Default;
        FrameEncoder.EnsurePayloadFits(settings.MaximumPayloadSize, settings);

        var error = Assert.Throws<ArgumentException>(() => FrameEncoder.EnsurePayloadFits(settings.MaximumPayloadSize + 1, settings));
        Assert.Equal("payload", error.ParamName);
        Assert.Contains("A payload of 127997 bytes does not fit in a frame: maximum-frame-size is 128000 bytes", error.Message);
        Assert.Contains("the largest payload is 127996 bytes after the 4-byte length prefix", error.Message);
    }

    [Fact]
    public void Every_entry_point_refuses_missing_settings_by_name()
    {
        var buffer = new ReadOnlySequence<byte>(new byte[8]);
        Assert.Throws<ArgumentNullException>("settings", () => FrameDecoder.TryReadFrame(ref buffer, null!, out _));
        Assert.Throws<ArgumentNullException>("settings", () => FrameDecoder.ReadLength(new byte[4], null!));
        Assert.Throws<ArgumentNullException>("settings", () => FrameEncoder.EnsurePayloadFits(1, null!));
    }

    [Fact]
    public void A_close_inside_a_frame_says_how_many_bytes_were_missing() =>
        Assert.Contains("5 bytes of an unfinished frame were left", InvalidFrameException.EndedInsideFrame(5).Message);
}
