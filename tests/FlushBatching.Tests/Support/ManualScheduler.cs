using System.IO.Pipelines;

namespace FlushBatching.Tests.Support;

/// <summary>A scheduler that runs nothing until the test says so, so writes can be queued before a drain.</summary>
public sealed class ManualScheduler : PipeScheduler
{
    private readonly Queue<(Action<object?> Action, object? State)> _work = new();

    public int Pending
    {
        get
        {
            lock (_work)
            {
                return _work.Count;
            }
        }
    }

    public override void Schedule(Action<object?> action, object? state)
    {
        lock (_work)
        {
            _work.Enqueue((action, state));
        }
    }

    /// <summary>Runs everything scheduled so far, and what that schedules in turn.</summary>
    public void RunAll()
    {
        while (true)
        {
            (Action<object?> Action, object? State) item;
            lock (_work)
            {
                if (!_work.TryDequeue(out item))
                {
                    return;
                }
            }

            item.Action(item.State);
        }
    }
}
