using DotNetty.Transport.Channels;

namespace FlushBatching.DotNetty;

/// <summary>
/// The placement guard of <see cref="BatchingWriterHandler"/>: a handler that combines unframed buffers must sit nearer
/// the socket than every encoder, or the encoder would frame a whole batch as one message.
/// </summary>
internal static class EncoderPlacement
{
    /// <summary>Throws when an encoder sits between the handler of <paramref name="context"/> and the socket.</summary>
    /// <exception cref="InvalidOperationException">An encoder is nearer the socket; the message names it and the fix.</exception>
    public static void RequireNoEncoderNearerTheSocket(IChannelHandlerContext context)
    {
        if (EncoderNearerTheSocket(context) is { } encoder)
        {
            throw new InvalidOperationException(
                $"BatchingWriterHandler was added after the encoder '{encoder}', nearer the application: it would combine " +
                "messages before they are encoded, and the encoder would frame each batch as one message. Add it nearer the " +
                "socket than your encoders (after TLS, before the length-field encoder), or pass combineBufferSize: 0.");
        }
    }

    // The name of the first encoder between this handler and the head of the pipeline (the socket), if any.
    private static string? EncoderNearerTheSocket(IChannelHandlerContext context)
    {
        foreach (var handler in context.Channel.Pipeline)
        {
            if (ReferenceEquals(handler, context.Handler))
            {
                return null;
            }

            if (IsEncoder(handler.GetType()))
            {
                return context.Channel.Pipeline.Context(handler)?.Name ?? handler.GetType().Name;
            }
        }

        return null;
    }

    // DotNetty's encoder bases (every one DotNetty.Codecs 0.7 has), by name: this package depends on
    // DotNetty.Transport, not on DotNetty.Codecs.
    private static bool IsEncoder(Type? type)
    {
        for (; type is not null; type = type.BaseType)
        {
            if (type.IsGenericType && type.GetGenericTypeDefinition().FullName is
                "DotNetty.Codecs.MessageToMessageEncoder`1" or "DotNetty.Codecs.MessageToByteEncoder`1" or
                "DotNetty.Codecs.MessageToMessageCodec`2")
            {
                return true;
            }
        }

        return false;
    }
}
