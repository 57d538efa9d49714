using System.Collections.Concurrent;

namespace FlushBatching.Akka;

/// <summary>
/// What is open (connections, channels), each item forgotten when its end task completes, so that shutdown can close
/// the rest. Thread-safe.
/// </summary>
internal sealed class OpenSet<T>
    where T : notnull
{
    private readonly ConcurrentDictionary<T, byte> _open = new();

    /// <summary>What is open now.</summary>
    public ICollection<T> Items => _open.Keys;

    /// <summary>Holds <paramref name="item"/> until <paramref name="ended"/> completes.</summary>
    public void Add(T item, Task ended)
    {
        _open[item] = 0;
        ended.ContinueWith(
            static (_, state) =>
            {
                var (open, item) = ((ConcurrentDictionary<T, byte>, T))state!;
                open.TryRemove(item, out var _);
            },
            (_open, item),
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously,
            TaskScheduler.Default);
    }
}
