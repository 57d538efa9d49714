using FlushBatching.Tcp;

namespace FlushBatching.Tests.Support;

/// <summary>A queued frame's bytes as the wire carries them: its head, then its body if it has one.</summary>
public static class OutboundFrameBytes
{
    internal static byte[] ToArray(this OutboundFrame frame) => [.. frame.Head.AsSpan(), .. frame.Body.AsSpan()];
}
