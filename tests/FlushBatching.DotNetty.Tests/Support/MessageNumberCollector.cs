using DotNetty.Buffers;
using DotNetty.Transport.Channels;
using FlushBatching.Tests.Support;

namespace FlushBatching.DotNetty.Tests.Support;

/// <summary>
/// The application's end of a pipeline in the handler's tests over real sockets: reads each frame as a message number
/// (3 bytes, little-endian) and keeps a frame of any other length as -1, so a frame split or merged shows in
/// <see cref="Values"/>.
/// </summary>
public sealed class MessageNumberCollector : ChannelHandlerAdapter
{
    private readonly List<int> _values = [];

    public IChannel? Channel { get; set; }

    public TaskCompletionSource Inactive { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public IReadOnlyList<int> Values
    {
        get
        {
            lock (_values)
            {
                return [.. _values];
            }
        }
    }

    /// <summary>Completes once <paramref name="count"/> messages have arrived, or a frame that is not one (it fails the test's check of <see cref="Values"/>).</summary>
    public Task Count(int count) => Poll.Until(() => Values is var values && (values.Count >= count || values.Contains(-1)), $"{count} messages");

    public void Clear()
    {
        lock (_values)
        {
            _values.Clear();
        }
    }

    public override void ChannelRead(IChannelHandlerContext context, object message)
    {
        var frame = (IByteBuffer)message;
        lock (_values)
        {
            _values.Add(frame.ReadableBytes == 3 ? frame.GetByte(0) | frame.GetByte(1) << 8 | frame.GetByte(2) << 16 : -1);
        }

        frame.Release();
    }

    public override void ChannelInactive(IChannelHandlerContext context)
    {
        Inactive.TrySetResult();
        context.FireChannelInactive();
    }
}
