using DotNetty.Buffers;
using DotNetty.Transport.Channels;
using FlushBatching.Diagnostics;
using FlushBatching.Framing;
using Google.Protobuf;

namespace FlushBatching.Akka;

/// <summary>
/// Cuts the length-prefixed frames out of a <see cref="DotNettyBatchingTransport"/> channel's reads and passes each
/// payload on as the <see cref="ByteString"/> Akka reads. A payload's bytes are copied from the read buffer straight
/// into the ByteString's own array, which a frame split across reads fills as its bytes arrive: nothing is accumulated
/// or sliced, as a DotNetty frame decoder followed by a copy would.
/// </summary>
/// <remarks>
/// A length the framing refuses (negative, or above <c>maximum-frame-size</c>) is checked from the prefix alone, before
/// anything is allocated for it, and goes down the pipeline as the core's <see cref="InvalidFrameException"/>; what
/// the peer sends after it is dropped. Runs on the channel's event loop; one instance per channel.
/// </remarks>
internal sealed class DotNettyPayloadDecoder(FramingSettings settings, FlushBatchingMetrics metrics) : ChannelHandlerAdapter
{
    // A frame's buffer starts at the bytes already read, or this many, whichever is more (never past the frame).
    private const int MinimumPayloadBuffer = 4096;

    // A frame's buffer takes the frame's whole length once this many times the bytes come reach it: a large frame from
    // an honest peer is allocated once and its first bytes copied once more, while a peer that announces a large frame
    // and sends little still costs at most this many times what it sent.
    private const long WholeFrameOnceReceivedTimes = 16;

    private readonly byte[] _header = new byte[FramingSettings.HeaderLength];
    private int _headerFilled;
    private byte[]? _payload;
    private int _payloadLength;
    private int _payloadFilled;
    private bool _refused;

    private long _frames;
    private long _bytes;

    public override void ChannelRead(IChannelHandlerContext context, object message)
    {
        if (message is not IByteBuffer buffer)
        {
            context.FireChannelRead(message);
            return;
        }

        try
        {
            if (!_refused)
            {
                Decode(context, buffer);
            }
        }
        catch (InvalidFrameException e)
        {
            _refused = true;
            context.FireExceptionCaught(e);
        }
        finally
        {
            buffer.Release();

            // Counted once per read, as the core's receive side counts once per pipe read (a read with no whole
            // frame records nothing).
            metrics.RecordReceived(_frames, _bytes);
            _frames = _bytes = 0;
        }
    }

    /// <summary>A peer that closes inside a frame sent a bad frame: an error, as on the core's sockets, not an orderly close.</summary>
    public override void ChannelInactive(IChannelHandlerContext context)
    {
        var left = _headerFilled + (_payload is null ? 0 : FramingSettings.HeaderLength + _payloadFilled);
        if (left > 0 && !_refused)
        {
            _refused = true;
            context.FireExceptionCaught(InvalidFrameException.EndedInsideFrame(left));
        }

        context.FireChannelInactive();
    }

    private void Decode(IChannelHandlerContext context, IByteBuffer buffer)
    {
        while (buffer.IsReadable())
        {
            if (_payload is null)
            {
                var headerBytes = Math.Min(FramingSettings.HeaderLength - _headerFilled, buffer.ReadableBytes);
                buffer.ReadBytes(_header, _headerFilled, headerBytes);
                _headerFilled += headerBytes;
                if (_headerFilled < FramingSettings.HeaderLength)
                {
                    return;
                }

                _headerFilled = 0;
                _payloadLength = FrameDecoder.ReadLength(_header, settings);

                // Sized by the bytes that have come, not by what the prefix announces: a peer that announces a large
                // frame and sends little costs this node little (found by fuzzing: an announced 2 GB frame threw
                // OutOfMemoryException here). The buffer doubles as bytes come, and takes the frame's whole length
                // once they reach a sixteenth of it.
                _payloadFilled = 0;
                _payload = _payloadLength == 0 ? [] : GC.AllocateUninitializedArray<byte>(PayloadBufferSize(buffer.ReadableBytes, 0));
            }

            var payloadBytes = Math.Min(_payloadLength - _payloadFilled, buffer.ReadableBytes);
            if (_payloadFilled + payloadBytes > _payload.Length)
            {
                var grown = GC.AllocateUninitializedArray<byte>(PayloadBufferSize(_payloadFilled + payloadBytes, _payload.Length));
                _payload.AsSpan(0, _payloadFilled).CopyTo(grown);
                _payload = grown;
            }

            buffer.ReadBytes(_payload, _payloadFilled, payloadBytes);
            _payloadFilled += payloadBytes;
            if (_payloadFilled == _payloadLength)
            {
                var payload = UnsafeByteOperations.UnsafeWrap(_payload);
                _payload = null;
                _frames++;
                _bytes += payload.Length;
                context.FireChannelRead(payload);
            }
        }
    }

    // The size of a buffer for the current frame that holds `needed` bytes of it, growing from `current`.
    private int PayloadBufferSize(long needed, long current) =>
        needed * WholeFrameOnceReceivedTimes >= _payloadLength
            ? _payloadLength
            : (int)Math.Min(_payloadLength, Math.Max(needed, Math.Max(2 * current, MinimumPayloadBuffer)));
}
