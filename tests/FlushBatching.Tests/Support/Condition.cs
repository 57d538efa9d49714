namespace FlushBatching.Tests.Support;

/// <summary>Waiting for a state instead of sleeping for a guess at how long it takes.</summary>
public static class Condition
{
    /// <summary>How long a test waits for what should happen at once: long enough for a loaded machine.</summary>
    public static readonly TimeSpan Patience = TimeSpan.FromSeconds(30);

    /// <summary>Returns once <paramref name="done"/> holds; fails after <see cref="Patience"/> naming <paramref name="what"/>.</summary>
    public static async Task PollAsync(Func<bool> done, string what)
    {
        var waited = System.Diagnostics.Stopwatch.StartNew();
        while (!done())
        {
            Assert.True(waited.Elapsed < Patience, $"waited {Patience} for {what}");
            await Task.Delay(10);
        }
    }
}
