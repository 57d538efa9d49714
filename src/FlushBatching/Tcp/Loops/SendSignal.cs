using System.Threading.Tasks.Sources;

namespace FlushBatching.Tcp.Loops;

/// <summary>The send loop's wake-up: awaitable with no allocation, and a thread-pool work item that completes it.</summary>
internal sealed class SendSignal : IValueTaskSource, IThreadPoolWorkItem
{
    public static readonly Action<object?> Set = static state => ((SendSignal)state!).Execute();

    private ManualResetValueTaskSourceCore<bool> _source;
    private int _set;

    /// <summary>Called by the send loop, under the write queue's lock, just before it parks.</summary>
    public void Reset()
    {
        _source.Reset();
        Volatile.Write(ref _set, 0);
    }

    public ValueTask WaitAsync() => new(this, _source.Version);

    /// <summary>Any number of wakes may race for one park; the first completes it, the rest do nothing.</summary>
    public void Execute()
    {
        if (Interlocked.Exchange(ref _set, 1) == 0)
        {
            _source.SetResult(true);
        }
    }

    void IValueTaskSource.GetResult(short token) => _source.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource.GetStatus(short token) => _source.GetStatus(token);

    void IValueTaskSource.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _source.OnCompleted(continuation, state, token, flags);
}
