using DotNetty.Common.Concurrency;
using FlushBatching.Batching;

namespace FlushBatching.DotNetty;

/// <summary>
/// Tells <see cref="BatchingWriterHandler"/> when a burst of writes has ended: a task queued on the channel's event
/// loop behind the write that made a batch pending looks again behind whatever was queued after it, and reports the
/// end once a whole pass of the loop's queue brought no new write. It stops as soon as nothing is pending.
/// </summary>
/// <remarks>Touched on the channel's event loop only, by the one handler that owns it.</remarks>
/// <param name="policy">Whose pending writes the check waits on.</param>
/// <param name="onBurstEnd">Called on the event loop when writes are pending and a pass of its queue brought no new write.</param>
internal sealed class BurstEndCheck(FlushPolicy policy, Action onBurstEnd)
{
    private static readonly Action<object> RunTask = static state => ((BurstEndCheck)state).Run();

    private IEventExecutor? _executor;
    private bool _queued;
    private bool _lookedAgain;
    private long _writes;
    private long _writesWhenQueued;

    /// <summary>Counts a write, whether or not it leaves anything pending.</summary>
    public void CountWrite() => _writes++;

    /// <summary>Queues a check on <paramref name="executor"/> unless one is queued already.</summary>
    public void QueueOn(IEventExecutor executor)
    {
        if (!_queued)
        {
            Queue(executor, lookedAgain: false);
        }
    }

    private void Queue(IEventExecutor executor, bool lookedAgain)
    {
        _queued = true;
        _lookedAgain = lookedAgain;
        _executor = executor;
        _writesWhenQueued = _writes;
        try
        {
            executor.Execute(RunTask, this);
        }
        catch (RejectedExecutionException)
        {
            // An executor that refuses tasks as it terminates runs nothing after this one: the burst ends here.
            _queued = false;
            onBurstEnd();
        }
    }

    private void Run()
    {
        _queued = false;
        if (!policy.HasPending)
        {
            return;
        }

        if (!_lookedAgain || _writes != _writesWhenQueued)
        {
            // Look again behind whatever was queued after the first write (it may write too), and behind the writes
            // that came in while this check waited.
            Queue(_executor!, lookedAgain: true);
            return;
        }

        onBurstEnd();
    }
}
