using DotNetty.Transport.Channels;

namespace FlushBatching.DotNetty.Tests.Support;

/// <summary>Sits on the application side of the handler and notes the inbound events that reach it.</summary>
public sealed class InboundEventRecorder : ChannelHandlerAdapter
{
    public List<string> Seen { get; } = [];

    public override void ChannelInactive(IChannelHandlerContext context) => Seen.Add("inactive");

    public override void ChannelWritabilityChanged(IChannelHandlerContext context) => Seen.Add("writability");
}
