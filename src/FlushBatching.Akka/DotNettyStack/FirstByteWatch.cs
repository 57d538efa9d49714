using DotNetty.Transport.Channels;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Admission;

namespace FlushBatching.Akka.DotNettyStack;

/// <summary>
/// The first handler of an accepted channel, in front of TLS: asks for one read at once (reads are otherwise off until
/// Akka registers its read handler), completes <see cref="Heard"/> when the first bytes arrive, passes them on, and
/// leaves the pipeline. So the DotNetty stack knows a peer has spoken from its first byte, as the sockets stack knows
/// it, and <see cref="SilentInbound"/> never closes a peer that has.
/// </summary>
/// <remarks>Runs on the channel's event loop; <see cref="Heard"/> may be awaited on any thread.</remarks>
internal sealed class FirstByteWatch : ChannelHandlerAdapter
{
    private readonly TaskCompletionSource _heard = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public FirstByteWatch() =>
        // A channel that closes before it speaks faults Heard, which nobody may be awaiting any more.
        ObservedTasks.Observe(_heard.Task);

    /// <summary>Completes when the peer's first bytes arrive; fails if the channel closes before.</summary>
    public Task Heard => _heard.Task;

    public override void ChannelActive(IChannelHandlerContext context)
    {
        context.Read();
        context.FireChannelActive();
    }

    public override void ChannelRead(IChannelHandlerContext context, object message)
    {
        _heard.TrySetResult();
        context.FireChannelRead(message);
        context.Channel.Pipeline.Remove(this);
    }

    public override void ChannelInactive(IChannelHandlerContext context)
    {
        _heard.TrySetException(new IOException($"The connection {SetupTimeouts.Inbound(context.Channel.RemoteAddress, context.Channel.LocalAddress)} closed before it sent anything."));
        context.FireChannelInactive();
    }
}
