using System.Buffers.Binary;

namespace FlushBatching.Framing;

/// <summary>Writes a frame, length prefix and payload together, into one buffer.</summary>
public static class FrameEncoder
{
    /// <summary>
    /// Writes the 4-byte length prefix and <paramref name="payload"/> into <paramref name="destination"/>,
    /// which must hold <c>payload.Length + 4</c> bytes.
    /// </summary>
    /// <returns>The number of bytes written.</returns>
    /// <exception cref="ArgumentException">The payload is larger than the settings allow, or the destination is too small.</exception>
    public static int Encode(ReadOnlySpan<byte> payload, Span<byte> destination, FramingSettings settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        EnsurePayloadFits(payload.Length, settings);
        WriteHeader(destination, payload.Length, settings.ByteOrder);
        payload.CopyTo(destination[FramingSettings.HeaderLength..]);
        return payload.Length + FramingSettings.HeaderLength;
    }

    /// <summary>Throws an exception naming the payload's size and the limit when it does not fit in a frame.</summary>
    /// <exception cref="ArgumentException">The payload is larger than <see cref="FramingSettings.MaximumPayloadSize"/>.</exception>
    public static void EnsurePayloadFits(int payloadLength, FramingSettings settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        if (payloadLength > settings.MaximumPayloadSize)
        {
            ThrowPayloadTooLarge(payloadLength, settings);
        }
    }

    /// <summary>Writes the 4-byte length prefix for a payload of <paramref name="payloadLength"/> bytes.</summary>
    public static void WriteHeader(Span<byte> destination, int payloadLength, ByteOrder byteOrder)
    {
        if (byteOrder == ByteOrder.LittleEndian)
        {
            BinaryPrimitives.WriteInt32LittleEndian(destination, payloadLength);
        }
        else
        {
            BinaryPrimitives.WriteInt32BigEndian(destination, payloadLength);
        }
    }

    private static void ThrowPayloadTooLarge(int payloadLength, FramingSettings settings) =>
        throw new ArgumentException(
            $"A payload of {payloadLength} bytes does not fit in a frame: {FramingSettings.MaximumFrameSizeKey} is {settings.MaximumFrameSize} bytes, " +
            $"so the largest payload is {settings.MaximumPayloadSize} bytes after the {FramingSettings.HeaderLength}-byte length prefix.",
            "payload");
}
