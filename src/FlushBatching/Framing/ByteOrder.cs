namespace FlushBatching.Framing;

/// <summary>The byte order of a frame's 4-byte length prefix; both ends of a connection must agree.</summary>
public enum ByteOrder
{
    /// <summary>Least significant byte first: Akka.Remote's default.</summary>
    LittleEndian,

    /// <summary>Most significant byte first ("network order").</summary>
    BigEndian,
}
