using System.Net;

namespace FlushBatching.Tcp;

/// <summary>
/// A listener's bound on the inbound connections it holds open at once (<see cref="ConnectionSettings.MaxInboundConnections"/>):
/// a slot is taken for each accepted connection and given back when it ends. At the bound a listener stops accepting
/// until a slot is given back; connections wait in the backlog meanwhile, and cost this process no descriptor.
/// </summary>
/// <remarks>
/// Why a pause and not an accept that closes at once: a closed connection is one its peer retries, so a flood of them
/// costs an accept, a close and the peer's retry each; a pause costs nothing while it lasts. Established peers are not
/// touched either way. Thread-safe: connections end on any thread.
/// </remarks>
internal sealed class InboundSlots
{
    private readonly SemaphoreSlim _free;
    private readonly string _how;
    private Action? _freed;

    /// <param name="bound">How many connections may be open at once.</param>
    /// <param name="how">How the bound was chosen, for the report.</param>
    /// <param name="time">The clock of <see cref="Silent"/>'s grace; the system's unless given.</param>
    public InboundSlots(int bound, string how, TimeProvider? time = null)
    {
        Bound = bound;
        _how = how;
        _free = new SemaphoreSlim(bound, bound);
        Silent = new SilentInbound(bound / 2, time ?? TimeProvider.System);
    }

    /// <summary>The most connections open at once.</summary>
    public int Bound { get; }

    /// <summary>Those of the accepted connections that have sent nothing yet: at most half the bound.</summary>
    public SilentInbound Silent { get; }

    /// <summary>The slots of <paramref name="settings"/>: <c>null</c> where there is no bound.</summary>
    public static InboundSlots? For(ConnectionSettings settings) => settings.InboundBound() is { } bound ? new InboundSlots(bound.Bound, bound.How, settings.TimeProvider) : null;

    /// <summary>Takes a slot if one is free.</summary>
    public bool TryTake() => _free.Wait(0);

    /// <summary>Waits for a free slot and takes it.</summary>
    public Task TakeAsync(CancellationToken cancellationToken) => _free.WaitAsync(cancellationToken);

    /// <summary>Gives a slot back, and tells whoever waits to be told (<see cref="OnFreed"/>).</summary>
    public void Release()
    {
        _free.Release();
        Volatile.Read(ref _freed)?.Invoke();
    }

    /// <summary>Called after each <see cref="Release"/>, on the releasing thread.</summary>
    public void OnFreed(Action freed) => Volatile.Write(ref _freed, freed);

    /// <summary>Gives the slot back once <paramref name="completion"/> ends, however it ends.</summary>
    public void ReleaseWhen(Task completion) =>
        completion.ContinueWith(static (_, state) => ((InboundSlots)state!).Release(), this, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);

    /// <summary>What a listener reports when it pauses at the bound.</summary>
    public BoundReachedException Paused(EndPoint? listening) => new(
        $"Accepting on {listening} paused: {Bound} inbound connections are open, the most {SettingKeys.MaxInboundConnections} allows ({_how}); " +
        "accepting again as soon as one of them ends. Connections wait in the backlog meanwhile.");

    /// <summary>A listener's report that it paused at its bound: nothing was dropped.</summary>
    internal sealed class BoundReachedException(string message) : IOException(message);
}
