using DotNetty.Buffers;
using DotNetty.Transport.Channels;
using DotNetty.Transport.Channels.Embedded;
using FlushBatching.Tcp;

namespace FlushBatching.DotNetty.Tests;

/// <summary>
/// What <see cref="QueuedChannelWriter"/> hands the pipeline for a payload: a whole array as itself (no buffer allocated
/// per message; the framing handler below takes arrays), part of an array as a buffer over that part, not a copy.
/// </summary>
public sealed class QueuedChannelWriterMessageTests : IDisposable
{
    private readonly List<object> _written = [];
    private readonly EmbeddedChannel _channel;
    private readonly QueuedChannelWriter _writer = new(ConnectionSettings.Default);

    public QueuedChannelWriterMessageTests() => _channel = new EmbeddedChannel(new WriteRecorder(_written), _writer);

    [Fact]
    public void A_payload_that_is_a_whole_array_goes_down_as_that_array()
    {
        var payload = new byte[] { 1, 2, 3 };

        Assert.True(_writer.TryWrite(payload));
        _channel.RunPendingTasks();

        Assert.Same(payload, Assert.Single(_written));
    }

    [Fact]
    public void Part_of_an_array_goes_down_as_a_buffer_over_that_part_not_a_copy()
    {
        var array = new byte[] { 1, 2, 3, 4 };

        Assert.True(_writer.TryWrite(array.AsMemory(1, 2)));
        _channel.RunPendingTasks();

        var buffer = Assert.IsAssignableFrom<IByteBuffer>(Assert.Single(_written));
        Assert.Same(array, buffer.Array);
        Assert.Equal((1, 2), (buffer.ArrayOffset + buffer.ReaderIndex, buffer.ReadableBytes));
        buffer.Release();
    }

    public void Dispose() => _channel.FinishAndReleaseAll();

    // Keeps what comes down the pipeline instead of passing it to the channel, which takes buffers only.
    private sealed class WriteRecorder(List<object> written) : ChannelHandlerAdapter
    {
        public override Task WriteAsync(IChannelHandlerContext context, object message)
        {
            written.Add(message);
            return Task.CompletedTask;
        }
    }
}
