using System.Net;
using System.Net.Sockets;

namespace FlushBatching.Tcp.Admission;

/// <summary>
/// What a listener does when accepting fails, one rule for both stacks: a peer that reset or aborted its connection
/// before it was taken is nothing wrong here, and the next accept starts at once; any other failure (out of file
/// descriptors, say) pauses accepting for <see cref="Duration"/>, as Netty does, and is reported once per pause. A retry
/// at once would spin a core and report the same error thousands of times a second.
/// </summary>
internal static class AcceptPause
{
    /// <summary>How long accepting pauses after it failed for a reason of this node's: 1 second, as Netty's.</summary>
    public static readonly TimeSpan Duration = TimeSpan.FromSeconds(1);

    /// <summary>Whether a failed accept was only the peer giving up first: the next accept starts at once, no pause.</summary>
    public static bool IsPeerGone(SocketError error) => error is SocketError.ConnectionReset or SocketError.ConnectionAborted;

    /// <summary>The report of a pause, in the same words on both stacks.</summary>
    /// <param name="listening">Where the listener listens.</param>
    /// <param name="why">What failed, as the stack saw it.</param>
    /// <param name="cause">The exception that failed the accept, when there is one.</param>
    public static IOException Report(EndPoint? listening, string why, Exception? cause = null) =>
        new($"Accepting on {PeerEndPoints.Describe(listening)} failed: {why}; accepting again in {SettingText.FormatDuration(Duration)}.", cause);
}
