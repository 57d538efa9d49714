namespace FlushBatching.Tests.Support;

/// <summary>When a sender whose peer has stopped reading has stopped sending: for a poll, so that a test acts on a full
/// pipe and full socket buffers instead of sleeping for a guess at how long filling them takes.</summary>
public static class SendStall
{
    /// <summary>
    /// A condition that holds once <paramref name="unsentBytes"/> stayed the same over 200 ms (each check waits that
    /// long) and more than <paramref name="sentMoreThan"/> of the <paramref name="written"/> bytes left the sender.
    /// </summary>
    public static Func<bool> Seen(Func<long> unsentBytes, long written, long sentMoreThan)
    {
        var last = unsentBytes();
        return () =>
        {
            Thread.Sleep(200);
            var now = unsentBytes();
            var stalled = now == last && written - now > sentMoreThan;
            last = now;
            return stalled;
        };
    }
}
