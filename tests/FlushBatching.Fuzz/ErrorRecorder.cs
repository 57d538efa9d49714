using DotNetty.Transport.Channels;

namespace FlushBatching.Fuzz;

/// <summary>The end of a test pipeline: keeps the errors that reach it instead of logging them.</summary>
internal sealed class ErrorRecorder : ChannelHandlerAdapter
{
    public int Count { get; private set; }

    public Exception? First { get; private set; }

    public override void ExceptionCaught(IChannelHandlerContext context, Exception exception)
    {
        Count++;
        First ??= exception;
    }
}
