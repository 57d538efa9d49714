namespace FlushBatching.Tests.Support;

/// <summary>Waiting for a state instead of sleeping for a guess at how long it takes.</summary>
public static class Condition
{
    /// <summary>Returns once <paramref name="done"/> holds; fails after <see cref="FrameCollector.Patience"/> naming <paramref name="what"/>.</summary>
    public static async Task PollAsync(Func<bool> done, string what)
    {
        var waited = System.Diagnostics.Stopwatch.StartNew();
        while (!done())
        {
            Assert.True(waited.Elapsed < FrameCollector.Patience, $"waited {FrameCollector.Patience} for {what}");
            await Task.Delay(10);
        }
    }
}
