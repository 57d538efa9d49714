using System.Buffers.Binary;
using DotNetty.Buffers;
using DotNetty.Transport.Channels.Embedded;
using FlushBatching.Batching;
using FlushBatching.Diagnostics;
using FlushBatching.Framing;
using Microsoft.Extensions.Time.Testing;
using ByteOrder = FlushBatching.Framing.ByteOrder;

namespace FlushBatching.DotNetty.Tests;

/// <summary>The handler with framing on: it writes each payload's length prefix where it combines.</summary>
public sealed class BatchingWriterHandlerFramingTests : IDisposable
{
    private readonly FlushBatchingMetrics _metrics = new();

    // A clock that stands still: on the system clock, a machine busy enough to stall these writes past the 40 ms
    // interval split them into two flushes (seen once under load).
    private readonly FakeTimeProvider _clock = new();
    private EmbeddedChannel _channel = null!;

    [Theory]
    [InlineData(ByteOrder.LittleEndian)]
    [InlineData(ByteOrder.BigEndian)]
    public void Small_payloads_go_down_in_one_buffer_each_after_its_length_prefix_in_the_byte_order_given(ByteOrder byteOrder)
    {
        Start(BatchingSettings.Default, byteOrder);
        _channel.WriteAsync(Unpooled.WrappedBuffer([1, 2, 3]));
        _channel.WriteAsync(Unpooled.WrappedBuffer(Array.Empty<byte>()));
        _channel.WriteAsync(Unpooled.WrappedBuffer([9]));
        _channel.RunPendingTasks();

        byte[] expected = [.. Prefix(3, byteOrder), 1, 2, 3, .. Prefix(0, byteOrder), .. Prefix(1, byteOrder), 9];
        Assert.Equal(expected, Take(_channel.ReadOutbound<IByteBuffer>()));
        Assert.Null(_channel.ReadOutbound<IByteBuffer>());
    }

    [Fact]
    public void A_large_payload_goes_down_as_it_is_after_a_prefix_of_its_own_and_after_what_was_combined_before_it()
    {
        Start(BatchingSettings.Default, ByteOrder.LittleEndian);
        var large = Unpooled.WrappedBuffer(new byte[BatchingWriterHandler.DefaultCombineBufferSize]);
        _channel.WriteAsync(Unpooled.WrappedBuffer([5]));
        _channel.WriteAsync(large);
        _channel.RunPendingTasks();

        Assert.Equal([.. Prefix(1, ByteOrder.LittleEndian), 5], Take(_channel.ReadOutbound<IByteBuffer>()));
        Assert.Equal(Prefix(BatchingWriterHandler.DefaultCombineBufferSize, ByteOrder.LittleEndian), Take(_channel.ReadOutbound<IByteBuffer>()));
        Assert.Same(large, _channel.ReadOutbound<IByteBuffer>());
        large.Release();
    }

    [Fact]
    public void Max_pending_bytes_counts_the_prefixes()
    {
        // 4 payload bytes and a 4-byte prefix reach 8 bytes: flushed by the write itself, before any burst end.
        Start(BatchingSettings.Default.WithMaxPendingBytes(8), ByteOrder.LittleEndian);
        _channel.WriteAsync(Unpooled.WrappedBuffer([1, 2, 3, 4]));

        Assert.Equal([.. Prefix(4, ByteOrder.LittleEndian), 1, 2, 3, 4], Take(_channel.ReadOutbound<IByteBuffer>()));
    }

    [Fact]
    public void Payloads_written_as_their_arrays_are_framed_and_combined_as_buffers_over_them_would_be_and_counted_alike()
    {
        // 3 + 4, 0 + 4 and 2 + 4 bytes: the third write reaches max-pending-bytes (17) and flushes the three as one buffer.
        Start(BatchingSettings.Default.WithMaxPendingBytes(17), ByteOrder.LittleEndian);
        _channel.WriteAsync(new byte[] { 1, 2, 3 });
        _channel.WriteAsync(Array.Empty<byte>());
        Assert.Null(_channel.ReadOutbound<object>());
        _channel.WriteAsync(Unpooled.WrappedBuffer([7, 8]));

        byte[] expected = [.. Prefix(3, ByteOrder.LittleEndian), 1, 2, 3, .. Prefix(0, ByteOrder.LittleEndian), .. Prefix(2, ByteOrder.LittleEndian), 7, 8];
        Assert.Equal(expected, Take(_channel.ReadOutbound<IByteBuffer>()));
        Assert.Null(_channel.ReadOutbound<object>());
    }

    [Fact]
    public void A_payload_array_too_large_to_combine_goes_down_wrapped_not_copied_after_its_own_prefix()
    {
        Start(BatchingSettings.Default, ByteOrder.LittleEndian);
        var large = new byte[BatchingWriterHandler.DefaultCombineBufferSize];
        large[^1] = 42;
        _channel.WriteAsync(new byte[] { 5 });
        _channel.WriteAsync(large);
        _channel.RunPendingTasks();

        Assert.Equal([.. Prefix(1, ByteOrder.LittleEndian), 5], Take(_channel.ReadOutbound<IByteBuffer>()));
        Assert.Equal(Prefix(large.Length, ByteOrder.LittleEndian), Take(_channel.ReadOutbound<IByteBuffer>()));
        var wrapped = _channel.ReadOutbound<IByteBuffer>();
        Assert.Same(large, wrapped.Array);
        Assert.Equal(large.Length, wrapped.ReadableBytes);
        wrapped.Release();
    }

    [Fact]
    public void Without_framing_an_array_is_a_message_of_another_type_and_passes_through_as_it_is()
    {
        _channel = new EmbeddedChannel(new BatchingWriterHandler(BatchingSettings.Default, BatchingWriterHandler.DefaultCombineBufferSize, _clock, _metrics));
        var array = new byte[] { 1, 2, 3 };
        _channel.WriteAsync(array);
        _channel.RunPendingTasks();

        Assert.Same(array, _channel.ReadOutbound<object>());
    }

    public void Dispose()
    {
        _channel?.FinishAndReleaseAll();
        _metrics.Dispose();
    }

    private void Start(BatchingSettings settings, ByteOrder byteOrder) =>
        _channel = new EmbeddedChannel(new BatchingWriterHandler(
            settings, BatchingWriterHandler.DefaultCombineBufferSize, _clock, _metrics, FramingSettings.Default.WithByteOrder(byteOrder)));

    private static byte[] Prefix(int length, ByteOrder byteOrder)
    {
        var prefix = new byte[4];
        if (byteOrder == ByteOrder.LittleEndian)
        {
            BinaryPrimitives.WriteInt32LittleEndian(prefix, length);
        }
        else
        {
            BinaryPrimitives.WriteInt32BigEndian(prefix, length);
        }

        return prefix;
    }

    private static byte[] Take(IByteBuffer buffer)
    {
        var bytes = new byte[buffer.ReadableBytes];
        buffer.ReadBytes(bytes);
        buffer.Release();
        return bytes;
    }
}
