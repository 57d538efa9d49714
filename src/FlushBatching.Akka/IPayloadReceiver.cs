using Google.Protobuf;

namespace FlushBatching.Akka;

/// <summary>Hears what an <see cref="ITransportConnection"/> receives, in order, one call at a time.</summary>
internal interface IPayloadReceiver
{
    /// <summary>One inbound frame's payload, the receiver's to keep.</summary>
    void OnPayload(ByteString payload);

    /// <summary>
    /// The connection has ended, after its last payload: <paramref name="reason"/> is <c>null</c> for an orderly close,
    /// else what ended it (a <see cref="Framing.InvalidFrameException"/> for a frame the framing refuses).
    /// </summary>
    void OnClosed(Exception? reason);
}
