using DotNetty.Buffers;
using DotNetty.Transport.Channels;
using DotNetty.Transport.Channels.Embedded;
using FlushBatching.Diagnostics;
using FlushBatching.Framing;
using Google.Protobuf;

namespace FlushBatching.Akka.Tests;

/// <summary>The DotNetty stack's decoder in a channel pipeline: what a peer's bytes cost and what they become.</summary>
public sealed class DotNettyPayloadDecoderTests
{
    [Fact]
    public async Task A_prefix_announcing_a_huge_frame_costs_only_the_bytes_that_came_and_ends_as_a_frame_cut_short()
    {
        // Found by fuzzing: with maximum-frame-size at its largest, a 4-byte prefix made the decoder allocate the whole
        // announced frame (2 GB: OutOfMemoryException) before a byte of it came.
        using var metrics = new FlushBatchingMetrics();
        var errors = new List<Exception>();
        var channel = new EmbeddedChannel(
            new DotNettyPayloadDecoder(FramingSettings.Default.WithMaximumFrameSize(int.MaxValue), metrics),
            new Errors(errors));
        var before = GC.GetAllocatedBytesForCurrentThread();

        channel.WriteInbound(Unpooled.WrappedBuffer([0xF0, 0xFF, 0xFF, 0x7F, 1, 2, 3]));
        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        await channel.CloseAsync();

        Assert.True(allocated < 64 * 1024, $"{allocated} bytes allocated for 7 bytes received");
        Assert.IsType<InvalidFrameException>(Assert.Single(errors));
        Assert.Null(channel.ReadInbound<ByteString>());
    }

    [Fact]
    public void A_frame_arriving_in_many_reads_comes_out_whole_and_intact()
    {
        using var metrics = new FlushBatchingMetrics();
        var channel = new EmbeddedChannel(new DotNettyPayloadDecoder(FramingSettings.Default, metrics));
        var payload = Enumerable.Range(0, 100_000).Select(i => (byte)(i * 7)).ToArray();
        var frame = BitConverter.GetBytes(payload.Length).Concat(payload).ToArray();

        for (var at = 0; at < frame.Length; at += 1_000)
        {
            channel.WriteInbound(Unpooled.WrappedBuffer(frame, at, Math.Min(1_000, frame.Length - at)));
        }

        Assert.Equal(payload, channel.ReadInbound<ByteString>().ToByteArray());
        Assert.Null(channel.ReadInbound<ByteString>());
    }

    private sealed class Errors(List<Exception> errors) : ChannelHandlerAdapter
    {
        public override void ExceptionCaught(IChannelHandlerContext context, Exception exception) => errors.Add(exception);
    }
}
