using DotNetty.Transport.Channels;

namespace FlushBatching.DotNetty.Tests.Support;

/// <summary>Sits between the handler under test and the channel's socket end and counts the flushes that get through.</summary>
public sealed class FlushCountingProbe : ChannelHandlerAdapter
{
    public int Flushes { get; private set; }

    /// <summary>Counts from zero again: after a TLS handshake's own flushes, say.</summary>
    public void Reset() => Flushes = 0;

    public override void Flush(IChannelHandlerContext context)
    {
        Flushes++;
        context.Flush();
    }
}
