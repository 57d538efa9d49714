namespace FlushBatching.Akka;

/// <summary>
/// What is open (connections, channels), each item forgotten when its end task completes, so that shutdown can close
/// the rest. Once closed, it takes nothing more: an item that comes later is refused, and its owner closes it.
/// Thread-safe.
/// </summary>
/// <remarks>
/// Adding and closing take one lock, so that an item added while shutdown begins is either in what
/// <see cref="Close"/> returns or refused: never neither.
/// </remarks>
internal sealed class OpenSet<T>
    where T : notnull
{
    private readonly object _gate = new();
    private readonly HashSet<T> _open = [];
    private bool _closed;

    /// <summary>Holds <paramref name="item"/> until <paramref name="ended"/> completes; <c>false</c> once closed.</summary>
    public bool TryAdd(T item, Task ended)
    {
        lock (_gate)
        {
            if (_closed)
            {
                return false;
            }

            _open.Add(item);
        }

        ended.ContinueWith(
            static (_, state) =>
            {
                var (set, item) = ((OpenSet<T>, T))state!;
                lock (set._gate)
                {
                    set._open.Remove(item);
                }
            },
            (this, item),
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously,
            TaskScheduler.Default);
        return true;
    }

    /// <summary>What is open now, for a log line that says what is left.</summary>
    public IReadOnlyList<T> Snapshot()
    {
        lock (_gate)
        {
            return [.. _open];
        }
    }

    /// <summary>Refuses every later item, and returns what is open now, for the caller to close.</summary>
    public IReadOnlyList<T> Close()
    {
        lock (_gate)
        {
            _closed = true;
            return [.. _open];
        }
    }
}
