using System.Buffers;
using FlushBatching.Tcp;

namespace TransportPingPong;

/// <summary>Writes every frame back as it came.</summary>
internal sealed class EchoServer : IFrameHandler
{
    public static readonly EchoServer Instance = new();

    public void OnFrame(FramedConnection connection, ReadOnlySequence<byte> payload)
    {
        var written = payload.IsSingleSegment ? connection.TryWrite(payload.FirstSpan) : WriteCopy(connection, payload);
        if (!written)
        {
            connection.Abort(new InvalidOperationException("The echo was refused at the high-water mark."));
        }
    }

    public void OnClosed(FramedConnection connection, Exception? reason)
    {
    }

    private static bool WriteCopy(FramedConnection connection, ReadOnlySequence<byte> payload)
    {
        var copy = ArrayPool<byte>.Shared.Rent((int)payload.Length);
        payload.CopyTo(copy);
        var written = connection.TryWrite(copy.AsSpan(0, (int)payload.Length));
        ArrayPool<byte>.Shared.Return(copy);
        return written;
    }
}
