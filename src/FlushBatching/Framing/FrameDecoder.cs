using System.Buffers;
using System.Buffers.Binary;

namespace FlushBatching.Framing;

/// <summary>
/// Cuts length-prefixed frames out of a byte stream. Frames may be split anywhere across reads; a frame's
/// length is checked as soon as its 4-byte prefix is in, before anything is buffered for it.
/// </summary>
internal static class FrameDecoder
{
    /// <summary>
    /// Takes the next whole frame's payload from the front of <paramref name="buffer"/>, if one is there.
    /// </summary>
    /// <param name="buffer">The bytes received and not yet consumed; on success, advanced past the frame.</param>
    /// <param name="settings">The byte order and maximum frame size.</param>
    /// <param name="payload">The frame's payload, a slice of <paramref name="buffer"/>; valid until the buffer is released.</param>
    /// <returns><c>true</c> when a whole frame was taken; <c>false</c> when more bytes are needed.</returns>
    /// <exception cref="InvalidFrameException">The prefix announces a negative length or a frame above the maximum.</exception>
    public static bool TryReadFrame(ref ReadOnlySequence<byte> buffer, FramingSettings settings, out ReadOnlySequence<byte> payload)
    {
        ArgumentNullException.ThrowIfNull(settings);
        if (buffer.Length < FramingSettings.HeaderLength)
        {
            payload = default;
            return false;
        }

        var length = ReadLength(buffer, settings);

        if (buffer.Length - FramingSettings.HeaderLength < length)
        {
            payload = default;
            return false;
        }

        payload = buffer.Slice(FramingSettings.HeaderLength, length);
        buffer = buffer.Slice(payload.End);
        return true;
    }

    /// <summary>
    /// Reads a frame's length prefix and checks it, for a reader that cuts frames out of its own buffers (such as a
    /// DotNetty pipeline): the same check, and the same error, as <see cref="TryReadFrame"/>.
    /// </summary>
    /// <param name="header">The frame's first <see cref="FramingSettings.HeaderLength"/> bytes.</param>
    /// <param name="settings">The byte order and maximum frame size.</param>
    /// <returns>The length of the payload that follows the prefix.</returns>
    /// <exception cref="InvalidFrameException">The prefix announces a negative length or a frame above the maximum.</exception>
    public static int ReadLength(ReadOnlySpan<byte> header, FramingSettings settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        var length = settings.ByteOrder == ByteOrder.LittleEndian
            ? BinaryPrimitives.ReadInt32LittleEndian(header)
            : BinaryPrimitives.ReadInt32BigEndian(header);
        if (length < 0 || length > settings.MaximumPayloadSize)
        {
            ThrowInvalidLength(length, settings);
        }

        return length;
    }

    private static int ReadLength(in ReadOnlySequence<byte> buffer, FramingSettings settings)
    {
        var first = buffer.FirstSpan;
        if (first.Length >= FramingSettings.HeaderLength)
        {
            return ReadLength(first, settings);
        }

        Span<byte> header = stackalloc byte[FramingSettings.HeaderLength];
        buffer.Slice(0, FramingSettings.HeaderLength).CopyTo(header);
        return ReadLength(header, settings);
    }

    private static void ThrowInvalidLength(int length, FramingSettings settings) =>
        throw new InvalidFrameException(length < 0
            ? $"The peer announced a frame of negative length {length}; the connection is not speaking this framing ({settings})."
            : $"The peer announced a frame of {length} bytes plus the {FramingSettings.HeaderLength}-byte prefix, above {SettingKeys.MaximumFrameSize} = {settings.MaximumFrameSize}b.");
}
