namespace FlushBatching.Framing;

/// <summary>
/// A peer sent bytes that are not a valid frame: a length above the maximum, a negative length, or a stream
/// that ended inside a frame. The connection that received them is closed with this as its reason; no other
/// connection is touched.
/// </summary>
public sealed class InvalidFrameException : IOException
{
    /// <summary>Creates the exception with a message saying what was wrong.</summary>
    public InvalidFrameException(string message)
        : base(message)
    {
    }

    /// <summary>The peer closed the connection with <paramref name="bytesLeft"/> bytes of a frame still to come: worded once for both stacks.</summary>
    internal static InvalidFrameException EndedInsideFrame(long bytesLeft) =>
        new($"The peer closed the connection inside a frame: {bytesLeft} bytes of an unfinished frame were left.");
}
