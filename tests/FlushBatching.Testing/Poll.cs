using System.Runtime.CompilerServices;

namespace FlushBatching.Tests.Support;

/// <summary>
/// Waiting for a state instead of sleeping for a guess at how long it takes: the one poll of every test project, linked
/// into each.
/// </summary>
public static class Poll
{
    /// <summary>How long a test waits for what should happen at once: long enough for a loaded machine.</summary>
    public static readonly TimeSpan Patience = TimeSpan.FromSeconds(30);

    /// <summary>
    /// Returns once <paramref name="condition"/> holds, looking every 10 ms; throws a <see cref="TimeoutException"/>
    /// naming <paramref name="what"/> after <paramref name="seconds"/>, <see cref="Patience"/> if not given.
    /// </summary>
    public static async Task Until(Func<bool> condition, string what, int? seconds = null)
    {
        var patience = seconds is { } given ? TimeSpan.FromSeconds(given) : Patience;
        var waited = System.Diagnostics.Stopwatch.StartNew();
        while (!condition())
        {
            if (waited.Elapsed > patience)
            {
                throw new TimeoutException($"Waited {patience.TotalSeconds:0.#}s for {what}.");
            }

            await Task.Delay(10);
        }
    }

    /// <summary>
    /// Returns once <paramref name="task"/> completes, with its outcome; throws a <see cref="TimeoutException"/> naming
    /// <paramref name="what"/> (the awaited expression if not given) after <paramref name="patience"/>,
    /// <see cref="Patience"/> if not given: an await that would otherwise hang the test run, and fail it without a word
    /// of what it waited for.
    /// </summary>
    public static async Task Within(Task task, [CallerArgumentExpression(nameof(task))] string what = "", TimeSpan? patience = null)
    {
        var bound = patience ?? Patience;
        try
        {
            await task.WaitAsync(bound);
        }
        catch (TimeoutException) when (!task.IsCompleted)
        {
            throw new TimeoutException($"Waited {bound.TotalSeconds:0.#}s for {what}.");
        }
    }

    /// <inheritdoc cref="Within(Task, string, TimeSpan?)"/>
    public static async Task<T> Within<T>(Task<T> task, [CallerArgumentExpression(nameof(task))] string what = "", TimeSpan? patience = null)
    {
        await Within((Task)task, what, patience);
        return await task;
    }
}
