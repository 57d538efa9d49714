namespace FlushBatching.Akka.Tests.Support;

/// <summary>Waits for a condition that another ActorSystem makes true, failing with what was awaited.</summary>
public static class Poll
{
    public static async Task Until(Func<bool> condition, string what, int seconds = 20)
    {
        var deadline = DateTime.UtcNow.AddSeconds(seconds);
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"Waited {seconds}s for {what}.");
            }

            await Task.Delay(20);
        }
    }
}
