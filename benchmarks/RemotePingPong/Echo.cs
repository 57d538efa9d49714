using Akka.Actor;

namespace RemotePingPong;

/// <summary>Deployed into the second system: sends every message back.</summary>
public sealed class Echo : UntypedActor
{
    protected override void OnReceive(object message) => Sender.Tell(message);
}
