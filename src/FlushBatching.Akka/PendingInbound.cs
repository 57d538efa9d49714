using FlushBatching.Tcp;

namespace FlushBatching.Akka;

/// <summary>
/// The inbound associations whose peer has not sent its first frame yet, oldest first, at most <see cref="Bound"/> of
/// them: half of <c>max-inbound-connections</c>. One more makes the oldest one go: an Akka peer sends its handshake the
/// moment it connects, so the longest silent is the likeliest stranger, and closing it lets the listener take the next
/// connection instead of pausing at its bound until strangers time out. So a flood of connections that never speak
/// cannot keep a new peer out for <c>connection-timeout</c>, and never holds more than half the bound.
/// </summary>
/// <remarks>Thread-safe: connections arrive, speak and end on any thread.</remarks>
/// <param name="bound">How many may wait for their first frame at once; at least 1.</param>
internal sealed class PendingInbound(int bound)
{
    private readonly LinkedList<BatchingAssociationHandle> _waiting = new();
    private readonly object _gate = new();

    /// <summary>The most that wait for their first frame at once.</summary>
    public int Bound { get; } = Math.Max(1, bound);

    /// <summary>The pending bound that goes with <paramref name="inbound"/>, the bound on all inbound connections, or none.</summary>
    public static PendingInbound? Within(InboundSlots? inbound) => inbound is null ? null : new PendingInbound(inbound.Bound / 2);

    /// <summary>Adds <paramref name="handle"/> as the newest; returns the oldest when there are now more than <see cref="Bound"/>.</summary>
    public BatchingAssociationHandle? Add(BatchingAssociationHandle handle, out LinkedListNode<BatchingAssociationHandle> node)
    {
        lock (_gate)
        {
            node = _waiting.AddLast(handle);
            if (_waiting.Count <= Bound)
            {
                return null;
            }

            var oldest = _waiting.First!;
            _waiting.Remove(oldest);
            return oldest.Value;
        }
    }

    /// <summary>Takes <paramref name="node"/> out: its peer spoke, or its connection ended. Safe to call when it is out already.</summary>
    public void Remove(LinkedListNode<BatchingAssociationHandle> node)
    {
        lock (_gate)
        {
            if (node.List is not null)
            {
                _waiting.Remove(node);
            }
        }
    }
}
