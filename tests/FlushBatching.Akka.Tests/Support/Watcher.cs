using Akka.Actor;

namespace FlushBatching.Akka.Tests.Support;

/// <summary>Watches an actor and completes a task with its Terminated message.</summary>
public sealed class Watcher : ReceiveActor
{
    public Watcher(IActorRef watched, TaskCompletionSource<Terminated> terminated)
    {
        Context.Watch(watched);
        Receive<Terminated>(message => terminated.TrySetResult(message));
    }
}
