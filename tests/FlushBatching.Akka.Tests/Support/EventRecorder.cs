using Akka.Actor;
using Akka.Event;

namespace FlushBatching.Akka.Tests.Support;

/// <summary>
/// Keeps the log events an ActorSystem publishes, as they are published: a subscriber that is not an actor, so it
/// misses nothing at termination, when Akka stops its logger actors with events still in their mailboxes.
/// </summary>
public sealed class EventRecorder : MinimalActorRef
{
    private readonly List<LogEvent> _events = [];

    private EventRecorder(ActorSystem system)
    {
        Provider = ((ExtendedActorSystem)system).Provider;
        Path = new RootActorPath(Provider.DefaultAddress) / "temp" / $"event-recorder-{Guid.NewGuid():N}";
    }

    public override ActorPath Path { get; }

    public override IActorRefProvider Provider { get; }

    /// <summary>The messages of the events recorded so far.</summary>
    public IReadOnlyList<string> Messages
    {
        get
        {
            lock (_events)
            {
                return [.. _events.Select(e => e.Message.ToString()!)];
            }
        }
    }

    /// <summary>Subscribes a recorder to every log event of <paramref name="system"/>.</summary>
    public static EventRecorder On(ActorSystem system)
    {
        var recorder = new EventRecorder(system);
        system.EventStream.Subscribe(recorder, typeof(LogEvent));
        return recorder;
    }

    protected override void TellInternal(object message, IActorRef sender)
    {
        if (message is LogEvent logEvent)
        {
            lock (_events)
            {
                _events.Add(logEvent);
            }
        }
    }
}
