namespace ClusterNode;

/// <summary>What one node counted about one peer, in both directions. Reported as-is, once a second.</summary>
public sealed class PeerStats
{
    /// <summary>Messages sent to the peer.</summary>
    public long Sent { get; set; }

    /// <summary>Of those, acknowledged by the peer.</summary>
    public long Acked { get; set; }

    /// <summary>Sent but never acknowledged within the stall timeout: given up, counted as lost.</summary>
    public long Abandoned { get; set; }

    /// <summary>Messages received from the peer, in order or after a gap.</summary>
    public long Received { get; set; }

    /// <summary>Times the next sequence number skipped ahead: messages lost on the way.</summary>
    public long Gaps { get; set; }

    /// <summary>Sequence numbers skipped over in all gaps.</summary>
    public long Missing { get; set; }

    /// <summary>Messages that arrived after a later one of the same stream (sender and receiver incarnation): never allowed.</summary>
    public long Reordered { get; set; }

    /// <summary>Messages whose size or bytes were not what the sender made: never allowed.</summary>
    public long Corrupt { get; set; }

    /// <summary>Times Akka.Remote reported this peer's association ended or failed (DisassociatedEvent, AssociationErrorEvent).</summary>
    public long Disassociations { get; set; }
}
