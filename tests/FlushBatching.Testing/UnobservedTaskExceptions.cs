namespace FlushBatching.Tests.Support;

/// <summary>
/// The exceptions of faulted tasks that nobody observed, recorded from its creation until it is disposed. A faulted task
/// is reported only when it is finalized, so what earlier tests left is collected before the recording starts, and this
/// test's tasks are collected before <see cref="Collected"/> reads it.
/// </summary>
public sealed class UnobservedTaskExceptions : IDisposable
{
    private readonly List<Exception> _seen = [];

    public UnobservedTaskExceptions()
    {
        Collect();
        TaskScheduler.UnobservedTaskException += Record;
    }

    /// <summary>What was reported so far, after a collection of what is unreachable now.</summary>
    public IReadOnlyList<Exception> Collected()
    {
        Collect();
        lock (_seen)
        {
            return [.. _seen];
        }
    }

    public void Dispose() => TaskScheduler.UnobservedTaskException -= Record;

    private static void Collect()
    {
        for (var i = 0; i < 3; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
    }

    private void Record(object? sender, UnobservedTaskExceptionEventArgs e)
    {
        lock (_seen)
        {
            _seen.Add(e.Exception);
        }
    }
}
