namespace FlushBatching.Tcp;

/// <summary>
/// One queued frame: its head in a pooled chunk the queue owns (the length prefix, and the payload too when it was
/// copied), and, for a large payload sent without a copy, the caller's own bytes after it.
/// </summary>
/// <param name="Head">The prefix, and the copied payload if any, in a chunk the queue returns once it is sent.</param>
/// <param name="Body">The caller's payload, sent from where it lies; <c>default</c> when the payload was copied.</param>
internal readonly record struct OutboundFrame(ArraySegment<byte> Head, ArraySegment<byte> Body)
{
    /// <summary>The frame's bytes on the wire, prefix included.</summary>
    public int Length => Head.Count + Body.Count;
}
