using System.Collections.Concurrent;
using System.Runtime.CompilerServices;
using Akka.Actor;
using Akka.Event;

namespace FlushBatching.Akka.Tests.Support;

/// <summary>An Akka logger that keeps every log event of its ActorSystem, so tests can read what was logged.</summary>
public sealed class CollectingLogger : ReceiveActor
{
    private static readonly ConditionalWeakTable<ActorSystem, ConcurrentQueue<LogEvent>> Events = new();

    public CollectingLogger()
    {
        var events = Events.GetValue(Context.System, static _ => new ConcurrentQueue<LogEvent>());
        Receive<InitializeLogger>(_ => Sender.Tell(new LoggerInitialized()));
        Receive<LogEvent>(events.Enqueue);
    }

    /// <summary>What <paramref name="system"/> has logged so far.</summary>
    public static IReadOnlyList<LogEvent> For(ActorSystem system) =>
        Events.TryGetValue(system, out var events) ? events.ToArray() : [];
}
