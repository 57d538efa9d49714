namespace FlushBatching.Tcp.Admission;

/// <summary>
/// A count of inbound connections that may be open at once, shared by the listeners that draw from it: one listener's
/// own when <see cref="ConnectionSettings.MaxInboundConnections"/> is set, or <see cref="Process"/>, the one budget every
/// listener with a derived bound draws from, so that together they stay within the descriptors the process can spare.
/// </summary>
/// <remarks>
/// Why one for the process: each listener that derived "limit − open − reserve" for itself would count the same free
/// descriptors again, and two ActorSystems in one process (or a core listener beside Akka) could together accept about
/// twice what is free; out of descriptors a .NET process can die in the runtime itself. Thread-safe: connections end on
/// any thread, and each release tells every listener waiting for one.
/// </remarks>
internal sealed class InboundBudget
{
    private static readonly Lazy<InboundBudget?> Derived = new(static () =>
        DescriptorBudget.Derive() is { } derived ? new InboundBudget(derived.Bound, derived.How + "; shared by every listener of this process whose bound is derived") : null);

    private readonly object _gate = new();
    private Action[] _onFreed = [];
    private int _free;

    /// <param name="total">How many may be open at once; at least 1.</param>
    /// <param name="how">How the total was chosen, for the report.</param>
    public InboundBudget(int total, string how)
    {
        Total = Math.Max(1, total);
        How = how;
        _free = Total;
    }

    /// <summary>
    /// The process's budget, derived from its descriptor limit when the first listener asks for it (less the
    /// descriptors open then and a reserve, <see cref="DescriptorBudget"/>); <c>null</c> where the limit cannot be read.
    /// </summary>
    public static InboundBudget? Process => Derived.Value;

    /// <summary>The most open at once.</summary>
    public int Total { get; }

    /// <summary>How <see cref="Total"/> was chosen.</summary>
    public string How { get; }

    /// <summary>How many are open now.</summary>
    public int Open => Total - Volatile.Read(ref _free);

    /// <summary>Takes one if one is free.</summary>
    public bool TryTake()
    {
        var free = Volatile.Read(ref _free);
        while (free > 0)
        {
            var seen = Interlocked.CompareExchange(ref _free, free - 1, free);
            if (seen == free)
            {
                return true;
            }

            free = seen;
        }

        return false;
    }

    /// <summary>Gives one back, and tells every listener that asked to be told (<see cref="OnFreed"/>), on this thread.</summary>
    public void Release()
    {
        Interlocked.Increment(ref _free);
        foreach (var freed in Volatile.Read(ref _onFreed))
        {
            freed();
        }
    }

    /// <summary>Has <paramref name="freed"/> called after each <see cref="Release"/> until the result is disposed.</summary>
    public IDisposable OnFreed(Action freed)
    {
        lock (_gate)
        {
            _onFreed = [.. _onFreed, freed];
        }

        return new Subscription(this, freed);
    }

    private void Unsubscribe(Action freed)
    {
        lock (_gate)
        {
            _onFreed = [.. _onFreed.Where(each => each != freed)];
        }
    }

    private sealed class Subscription(InboundBudget budget, Action freed) : IDisposable
    {
        private int _disposed;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) == 0)
            {
                budget.Unsubscribe(freed);
            }
        }
    }
}
