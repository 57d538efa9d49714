namespace FlushBatching.Akka;

/// <summary>
/// Tasks the DotNetty stack starts and does not wait for (a channel's close, a write's completion) are observed here:
/// a failure there changes nothing (the channel ends either way) and must not surface as an unobserved task exception.
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
