using System.Threading.Channels;
using Akka.Remote.Transport;
using FlushBatching.Tests.Support;

namespace FlushBatching.Akka.Tests.Support;

/// <summary>Collects the events a transport or an association handle announces, for a test to read in order.</summary>
public sealed class EventCollector : IAssociationEventListener, IHandleEventListener
{
    private readonly Channel<object> _events = Channel.CreateUnbounded<object>();

    public void Notify(IAssociationEvent ev) => _events.Writer.TryWrite(ev);

    public void Notify(IHandleEvent ev) => _events.Writer.TryWrite(ev);

    /// <summary>The next event, which must be a <typeparamref name="T"/>, within <see cref="Poll.Patience"/>.</summary>
    public async Task<T> Next<T>()
    {
        var next = await Poll.Within(_events.Reader.ReadAsync().AsTask());
        return next is T expected ? expected : throw new InvalidOperationException($"Expected {typeof(T).Name}, got {next}.");
    }

    /// <summary>Whether an event is waiting.</summary>
    public bool HasNext => _events.Reader.TryPeek(out _);
}
