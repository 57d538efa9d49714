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
}
