namespace FlushBatching.Fuzz;

/// <summary>
/// The fuzz targets' oracle, written from the wire format alone and sharing no code with the decoders it judges: a
/// frame is a 4-byte length (the payload's, in the configured byte order, a signed 32-bit number) and that many
/// payload bytes; a length below 0 or above <c>maximum-frame-size</c> less the 4 bytes is bad the moment its 4 bytes
/// are in, whatever follows.
/// </summary>
internal static class WireFormat
{
    /// <summary>The frames in <paramref name="bytes"/>, in order, up to the first bad length or the end.</summary>
    /// <returns>The payloads; whether a bad length stopped them; how many bytes are left after the last whole frame.</returns>
    public static (List<byte[]> Payloads, bool BadLength, int Left) Parse(ReadOnlySpan<byte> bytes, bool bigEndian, long maximumFrameSize)
    {
        var payloads = new List<byte[]>();
        var at = 0;
        while (bytes.Length - at >= 4)
        {
            var b = bytes.Slice(at, 4);
            var raw = bigEndian
                ? ((uint)b[0] << 24) | ((uint)b[1] << 16) | ((uint)b[2] << 8) | b[3]
                : ((uint)b[3] << 24) | ((uint)b[2] << 16) | ((uint)b[1] << 8) | b[0];
            var length = unchecked((int)raw);
            if (length < 0 || length > maximumFrameSize - 4)
            {
                return (payloads, true, bytes.Length - at);
            }

            if (bytes.Length - at - 4 < length)
            {
                break;
            }

            payloads.Add(bytes.Slice(at + 4, length).ToArray());
            at += 4 + length;
        }

        return (payloads, false, bytes.Length - at);
    }
}
