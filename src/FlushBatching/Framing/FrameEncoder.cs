using System.Buffers.Binary;

namespace FlushBatching.Framing;

/// <summary>What a frame's writer checks and writes before the payload: that it fits, and its length prefix.</summary>
internal static class FrameEncoder
{
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

    /// <summary>The bytes a payload of <paramref name="payloadLength"/> bytes takes on the wire: its length prefix and itself.</summary>
    public static int FrameLength(int payloadLength) => FramingSettings.HeaderLength + payloadLength;

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
            $"A payload of {payloadLength} bytes does not fit in a frame: {SettingKeys.MaximumFrameSize} is {settings.MaximumFrameSize} bytes, " +
            $"so the largest payload is {settings.MaximumPayloadSize} bytes after the {FramingSettings.HeaderLength}-byte length prefix.",
            "payload");
}
