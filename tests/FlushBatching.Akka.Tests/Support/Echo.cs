using Akka.Actor;

namespace FlushBatching.Akka.Tests.Support;

/// <summary>Replies to every message with the message itself.</summary>
public sealed class Echo : ReceiveActor
{
    public Echo() => ReceiveAny(message => Sender.Tell(message));
}
