using System.Globalization;
using System.Net;

namespace FlushBatching.Tcp.Admission;

/// <summary>
/// A listener's bound on the inbound connections it holds open at once (<see cref="ConnectionSettings.MaxInboundConnections"/>):
/// a slot is taken for each accepted connection and given back when it ends. At the bound a listener stops accepting
/// until a slot is given back; connections wait in the backlog meanwhile, and cost this process no descriptor. Slots come
/// from an <see cref="InboundBudget"/>: the listener's own when the bound is set, the process's when it is derived.
/// </summary>
/// <remarks>
/// Why a pause and not an accept that closes at once: a closed connection is one its peer retries, so a flood of them
/// costs an accept, a close and the peer's retry each; a pause costs nothing while it lasts. Established peers are not
/// touched either way. Thread-safe: connections end on any thread.
/// </remarks>
internal sealed class InboundSlots
{
    private readonly InboundBudget _budget;

    /// <param name="budget">Where slots come from.</param>
    /// <param name="time">The clock of <see cref="Silent"/>'s grace; the system's unless given.</param>
    public InboundSlots(InboundBudget budget, TimeProvider? time = null)
    {
        _budget = budget;
        Silent = new SilentInbound(budget.Total / 2, time ?? TimeProvider.System);
    }

    /// <summary>The most connections open at once, from this listener's budget.</summary>
    public int Bound => _budget.Total;

    /// <summary>How the bound was chosen, in words for a log line.</summary>
    public string How => _budget.How;

    /// <summary>Those of the accepted connections that have sent nothing yet: at most half the bound.</summary>
    public SilentInbound Silent { get; }

    /// <summary>
    /// The slots of <paramref name="settings"/>: <c>null</c> where there is no bound; from the process's budget when the
    /// bound is derived.
    /// </summary>
    public static InboundSlots? For(ConnectionSettings settings) => settings.MaxInboundConnections switch
    {
        0 => null,
        { } set => new InboundSlots(new InboundBudget(set, "as set"), settings.TimeProvider),
        null => InboundBudget.Process is { } process ? new InboundSlots(process, settings.TimeProvider) : null,
    };

    /// <summary>Takes a slot if one is free.</summary>
    public bool TryTake() => _budget.TryTake();

    /// <summary>Waits for a free slot and takes it.</summary>
    public async Task TakeAsync(CancellationToken cancellationToken)
    {
        while (!TryTake())
        {
            var freed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            using (_budget.OnFreed(() => freed.TrySetResult()))
            using (cancellationToken.Register(static state => ((TaskCompletionSource)state!).TrySetCanceled(), freed))
            {
                // Looked at again once told: a slot freed between the first look and the subscription is not missed.
                if (TryTake())
                {
                    return;
                }

                await freed.Task.ConfigureAwait(false);
            }
        }
    }

    /// <summary>Gives a slot back, and tells whoever waits to be told (<see cref="OnFreed"/>).</summary>
    public void Release() => _budget.Release();

    /// <summary>Has <paramref name="freed"/> called after each slot given back, on the releasing thread, until the result is disposed.</summary>
    public IDisposable OnFreed(Action freed) => _budget.OnFreed(freed);

    /// <summary>Gives the slot back once <paramref name="completion"/> ends, however it ends.</summary>
    public void ReleaseWhen(Task completion) =>
        completion.ContinueWith(static (_, state) => ((InboundSlots)state!).Release(), this, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);

    /// <summary>What a listener reports when it pauses at the bound.</summary>
    public BoundReachedException Paused(EndPoint? listening) => new(string.Create(CultureInfo.InvariantCulture,
        $"Accepting on {listening} paused: {_budget.Open} inbound connections are open, the most {SettingKeys.MaxInboundConnections} allows ({_budget.How}); ") +
        "accepting again as soon as one of them ends. Connections wait in the backlog meanwhile.");

    /// <summary>A listener's report that it paused at its bound: nothing was dropped.</summary>
    internal sealed class BoundReachedException(string message) : IOException(message);
}
