namespace RemotePingPong.Ceiling;

/// <summary>
/// A thread hand-off as a real transport makes one: items added on one thread are passed on in batches by a thread-pool
/// work item, scheduled when the first item of a batch arrives and run until it finds none left, the way a send loop
/// drains its queue or a receive loop delivers what one read brought. No copy, no system call: only the wake and the
/// hop to another thread.
/// </summary>
internal sealed class HandOff<T> : IThreadPoolWorkItem
{
    private readonly Action<T> _next;
    private readonly object _gate = new();
    private List<T> _pending = new();
    private List<T> _draining = new();
    private bool _scheduled;

    public HandOff(Action<T> next) => _next = next;

    /// <summary>Queues <paramref name="item"/>; the next hand-off runs on the thread pool unless one already will.</summary>
    public void Add(T item)
    {
        lock (_gate)
        {
            _pending.Add(item);
            if (_scheduled)
            {
                return;
            }

            _scheduled = true;
        }

        ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
    }

    void IThreadPoolWorkItem.Execute()
    {
        while (true)
        {
            lock (_gate)
            {
                if (_pending.Count == 0)
                {
                    _scheduled = false;
                    return;
                }

                (_pending, _draining) = (_draining, _pending);
            }

            foreach (var item in _draining)
            {
                _next(item);
            }

            _draining.Clear();
        }
    }
}
