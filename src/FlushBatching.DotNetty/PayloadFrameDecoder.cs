using DotNetty.Buffers;
using DotNetty.Transport.Channels;
using FlushBatching.Diagnostics;
using FlushBatching.Framing;

namespace FlushBatching.DotNetty;

/// <summary>
/// Cuts the length-prefixed frames that <see cref="BatchingWriterHandler"/> writes (given <see cref="FramingSettings"/>)
/// out of a channel's reads, and passes each payload on as a <c>byte[]</c> of its exact length, the payload's own: it is
/// copied from the read buffer straight into that array, which a frame split across reads fills as its bytes arrive.
/// Nothing is accumulated or sliced, as a DotNetty frame decoder followed by a copy would, and no pooled buffer is left
/// for the next handler to release.
/// </summary>
/// <remarks>
/// Put it after TLS (if any) and before the handler that reads the payloads; with <see cref="BatchingWriterHandler"/> and
/// <see cref="QueuedChannelWriter"/> it makes the pipeline FlushBatching's Akka transport runs. A length the framing
/// refuses (negative, or above <see cref="FramingSettings.MaximumFrameSize"/>) is checked from the prefix alone, before
/// anything is allocated for it, and goes down the pipeline as an <see cref="InvalidFrameException"/>; what the peer
/// sends after it is dropped. A peer that closes inside a frame raises one too. Frames and payload bytes are counted on
/// <c>flushbatching.frames.received</c> and <c>flushbatching.bytes.received</c>, once per read. Runs on the channel's
/// event loop; one instance per channel.
/// </remarks>
/// <param name="settings">The byte order of the prefixes and the largest frame taken.</param>
/// <param name="metrics">Where what is received is counted; the shared <c>FlushBatching</c> Meter if <c>null</c>.</param>
public sealed class PayloadFrameDecoder(FramingSettings settings, FlushBatchingMetrics? metrics = null) : ChannelHandlerAdapter
{
    // A frame's buffer starts at the bytes already read, or this many, whichever is more (never past the frame).
    private const int MinimumPayloadBuffer = 4096;

    // A frame's buffer takes the frame's whole length once this many times the bytes come reach it: a large frame from
    // an honest peer is allocated once and its first bytes copied once more, while a peer that announces a large frame
    // and sends little still costs at most this many times what it sent.
    private const long WholeFrameOnceReceivedTimes = 16;

    private readonly FlushBatchingMetrics _metrics = metrics ?? FlushBatchingMetrics.Shared;
    private readonly byte[] _header = new byte[FramingSettings.HeaderLength];
    private int _headerFilled;
    private byte[]? _payload;
    private int _payloadLength;
    private int _payloadFilled;
    private bool _refused;

    private long _frames;
    private long _bytes;

    /// <summary>Decodes a buffer read (and releases it); passes any other message on.</summary>
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
            _metrics.RecordReceived(_frames, _bytes);
            _frames = _bytes = 0;
        }
    }

    /// <summary>A peer that closes inside a frame sent a bad frame: an <see cref="InvalidFrameException"/> first, as on the core's sockets, not an orderly close.</summary>
    public override void ChannelInactive(IChannelHandlerContext context)
    {
        var left = _headerFilled + (_payload is null ? 0 : FrameEncoder.FrameLength(_payloadFilled));
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
                // Never sized past the frame, and grown to hold what came: the frame's exact length now.
                var payload = _payload;
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
