using System.Buffers.Binary;

namespace ClusterNode;

/// <summary>
/// The bytes of one traffic message: its stream (one per sender and receiver incarnation) and its sequence number in
/// that stream, then a pattern that both derive from the sequence number, so the receiver checks size and every byte.
/// Sizes are log-uniform from 17 bytes up to the maximum, so most messages are small and some are near the frame limit.
/// </summary>
public static class Payload
{
    public const int HeaderSize = 16;

    public static byte[] Create(long stream, long sequence, int maximumSize)
    {
        var bytes = new byte[SizeOf(sequence, maximumSize)];
        BinaryPrimitives.WriteInt64LittleEndian(bytes, stream);
        BinaryPrimitives.WriteInt64LittleEndian(bytes.AsSpan(8), sequence);
        for (var i = HeaderSize; i < bytes.Length; i++)
        {
            bytes[i] = PatternByte(sequence, i);
        }

        return bytes;
    }

    public static (long Stream, long Sequence) Header(byte[] bytes) =>
        bytes.Length < HeaderSize
            ? (0, -1)
            : (BinaryPrimitives.ReadInt64LittleEndian(bytes), BinaryPrimitives.ReadInt64LittleEndian(bytes.AsSpan(8)));

    /// <summary>Whether <paramref name="bytes"/> are exactly what <see cref="Create"/> makes for its sequence number.</summary>
    public static bool IsIntact(byte[] bytes, int maximumSize)
    {
        var (_, sequence) = Header(bytes);
        if (sequence < 0 || bytes.Length != SizeOf(sequence, maximumSize))
        {
            return false;
        }

        for (var i = HeaderSize; i < bytes.Length; i++)
        {
            if (bytes[i] != PatternByte(sequence, i))
            {
                return false;
            }
        }

        return true;
    }

    private static int SizeOf(long sequence, int maximumSize)
    {
        // A fixed hash of the sequence number, mapped log-uniformly onto [HeaderSize + 1, maximumSize].
        var hash = (ulong)sequence * 0x9E3779B97F4A7C15UL;
        var unit = (hash >> 11) * (1.0 / (1UL << 53));
        return (int)Math.Exp(Math.Log(HeaderSize + 1) + (unit * (Math.Log(maximumSize) - Math.Log(HeaderSize + 1))));
    }

    private static byte PatternByte(long sequence, int index) => (byte)((sequence * 31) + (index * 7));
}
