using DotNetty.Buffers;
using DotNetty.Transport.Channels;
using DotNetty.Transport.Channels.Embedded;
using FlushBatching.Diagnostics;
using FlushBatching.Framing;
using FlushBatching.Tests.Support;

namespace FlushBatching.DotNetty.Tests;

/// <summary>The payload decoder in a channel pipeline: what a peer's bytes cost and what they become.</summary>
public sealed class PayloadFrameDecoderTests
{
    [Fact]
    public async Task A_prefix_announcing_a_huge_frame_costs_only_the_bytes_that_came_and_ends_as_a_frame_cut_short()
    {
        // Found by fuzzing: with maximum-frame-size at its largest, a 4-byte prefix made the decoder allocate the whole
        // announced frame (2 GB: OutOfMemoryException) before a byte of it came.
        using var metrics = new FlushBatchingMetrics();
        var errors = new List<Exception>();
        var channel = new EmbeddedChannel(
            new PayloadFrameDecoder(FramingSettings.Default.WithMaximumFrameSize(int.MaxValue), metrics),
            new Errors(errors));
        var before = GC.GetAllocatedBytesForCurrentThread();

        channel.WriteInbound(Unpooled.WrappedBuffer([0xF0, 0xFF, 0xFF, 0x7F, 1, 2, 3]));
        channel.WriteInbound(Unpooled.WrappedBuffer(new byte[10_000])); // more than twice the first buffer at once
        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        await channel.CloseAsync();

        Assert.True(allocated < 64 * 1024, $"{allocated} bytes allocated for 10,007 bytes received");
        Assert.IsType<InvalidFrameException>(Assert.Single(errors));
        Assert.Null(channel.ReadInbound<byte[]>());
    }

    [Fact]
    public void A_frame_arriving_in_many_reads_comes_out_whole_and_intact_its_buffer_allocated_whole_once_a_sixteenth_came()
    {
        // 4 KiB, 8 KiB, then the whole frame (and the hundred reads' wrappers, about 20 KB): doubling all the way would
        // cost twice the frame and copy it once more, growing by each read's bytes fifty times.
        var allocated = AllocatedForOneFrameInReads(100_000, read: 1_000);
        Assert.True(allocated < 1.5 * 100_000, $"{allocated} bytes allocated for a 100,000-byte frame");
    }

    [Fact]
    public void A_large_frame_in_small_reads_doubles_its_buffer_until_a_sixteenth_came_instead_of_growing_it_by_each_read()
    {
        // 4, 8, 16, 32 and 64 KiB, then the whole frame, and 251 reads' wrappers: about 1.2 MB. Grown by each read's
        // 4,000 bytes up to the sixteenth instead: about 1.5 MB.
        var allocated = AllocatedForOneFrameInReads(1_000_000, read: 4_000);
        Assert.True(allocated < 1.35 * 1_000_000, $"{allocated} bytes allocated for a 1,000,000-byte frame");
    }

    [Fact]
    public void Frames_cut_anywhere_come_out_in_order_and_are_counted_once_per_read()
    {
        using var metrics = new FlushBatchingMetrics();
        using var recorder = new MeterRecorder(metrics);
        var channel = new EmbeddedChannel(new PayloadFrameDecoder(FramingSettings.Default, metrics));
        var stream = Frame([1, 2, 3]).Concat(Frame([])).Concat(Frame([4, 5])).Concat(Frame([6, 7, 8, 9])).Concat(Frame([10])).ToArray();

        // Three whole frames and two bytes of a prefix; one more byte of it; its last byte and half the payload; the
        // rest of that payload and a whole frame.
        foreach (var (at, count) in new[] { (0, 19), (19, 1), (20, 3), (23, stream.Length - 23) })
        {
            channel.WriteInbound(Unpooled.WrappedBuffer(stream, at, count));
        }

        Assert.Equal([[1, 2, 3], [], [4, 5], [6, 7, 8, 9], [10]], Enumerable.Range(0, 5).Select(_ => channel.ReadInbound<byte[]>()));
        Assert.Equal([3, 2], recorder.Values("flushbatching.frames.received"));
        Assert.Equal([5, 5], recorder.Values("flushbatching.bytes.received"));
    }

    [Fact]
    public void Each_read_buffer_is_released_and_what_is_not_a_buffer_passes_on_untouched()
    {
        using var metrics = new FlushBatchingMetrics();
        var channel = new EmbeddedChannel(new PayloadFrameDecoder(FramingSettings.Default, metrics));
        var buffer = Unpooled.Buffer(16).WriteBytes(Frame([1]));

        channel.WriteInbound(buffer, "not bytes");

        Assert.Equal(0, buffer.ReferenceCount);
        Assert.Equal([1], channel.ReadInbound<byte[]>());
        Assert.Equal("not bytes", channel.ReadInbound<string>());
    }

    [Fact]
    public void A_refused_length_is_one_error_and_every_byte_after_it_is_dropped()
    {
        var (channel, errors, events) = Watched();

        channel.WriteInbound(Unpooled.WrappedBuffer([0xFF, 0xFF, 0xFF, 0xFF, .. Frame([1])]));
        channel.WriteInbound(Unpooled.WrappedBuffer(Frame([2])));
        channel.Pipeline.FireChannelInactive();

        Assert.IsType<InvalidFrameException>(Assert.Single(errors));
        Assert.Null(channel.ReadInbound<byte[]>());
        Assert.Equal(["inactive"], events);
    }

    [Theory]
    [InlineData(2, 2)]
    [InlineData(4 + 10, 14)]
    public void A_peer_that_closes_inside_a_frame_is_an_error_naming_the_bytes_left_then_the_close_passes_on(int sent, int left)
    {
        var (channel, errors, events) = Watched();

        channel.WriteInbound(Unpooled.WrappedBuffer(Frame(new byte[100]), 0, sent));
        channel.Pipeline.FireChannelInactive();

        Assert.Contains($" {left} bytes", Assert.IsType<InvalidFrameException>(Assert.Single(errors)).Message);
        Assert.Equal(["inactive"], events);
    }

    [Fact]
    public void A_peer_that_closes_between_frames_closes_cleanly()
    {
        var (channel, errors, events) = Watched();

        channel.WriteInbound(Unpooled.WrappedBuffer(Frame([1, 2])));
        channel.Pipeline.FireChannelInactive();

        Assert.Empty(errors);
        Assert.Equal(["inactive"], events);
    }

    // One frame of `size` bytes sent in reads of `read` bytes: it comes out whole, intact and alone. Returns the bytes
    // allocated on this thread meanwhile.
    private static long AllocatedForOneFrameInReads(int size, int read)
    {
        using var metrics = new FlushBatchingMetrics();
        var channel = new EmbeddedChannel(new PayloadFrameDecoder(FramingSettings.Default.WithMaximumFrameSize(2_000_000), metrics));
        var payload = Enumerable.Range(0, size).Select(i => (byte)(i * 7)).ToArray();
        var frame = Frame(payload);
        var before = GC.GetAllocatedBytesForCurrentThread();

        for (var at = 0; at < frame.Length; at += read)
        {
            channel.WriteInbound(Unpooled.WrappedBuffer(frame, at, Math.Min(read, frame.Length - at)));
        }

        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Equal(payload, channel.ReadInbound<byte[]>());
        Assert.Null(channel.ReadInbound<byte[]>());
        return allocated;
    }

    private static byte[] Frame(byte[] payload) => [.. BitConverter.GetBytes(payload.Length), .. payload];

    // The decoder with a handler behind it that notes the errors and the close that come through.
    private static (EmbeddedChannel Channel, List<Exception> Errors, List<string> Events) Watched()
    {
        var (errors, events) = (new List<Exception>(), new List<string>());
        return (new EmbeddedChannel(new PayloadFrameDecoder(FramingSettings.Default, FlushBatchingMetrics.Shared), new Errors(errors, events)), errors, events);
    }

    private sealed class Errors(List<Exception> errors, List<string>? events = null) : ChannelHandlerAdapter
    {
        public override void ExceptionCaught(IChannelHandlerContext context, Exception exception) => errors.Add(exception);

        public override void ChannelInactive(IChannelHandlerContext context) => events?.Add("inactive");
    }
}
