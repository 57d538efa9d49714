namespace FlushBatching;

/// <summary>
/// Tasks started and not waited for (a channel's close, a write's completion, a step past its bound, a set-up nobody
/// awaits any more) are observed here, on every stack: a failure there changes nothing (the connection ends either
/// way, or was given up) and must not surface as an unobserved task exception.
/// </summary>
internal static class ObservedTasks
{
    /// <summary>Observes <paramref name="task"/>'s failure, if it fails; costs nothing when it has already succeeded.</summary>
    public static void Observe(Task task)
    {
        if (!task.IsCompletedSuccessfully)
        {
            task.ContinueWith(static failed => _ = failed.Exception, CancellationToken.None,
                TaskContinuationOptions.OnlyOnFaulted | TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        }
    }
}
