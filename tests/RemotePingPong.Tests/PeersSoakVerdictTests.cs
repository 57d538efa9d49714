using DotNetty.Common.Internal.Logging;
using RemotePingPong.ManyPeers;
using RemotePingPong.Soak;

namespace RemotePingPong.Tests;

/// <summary>
/// The peers soak's verdict (benchmarks/peers-soak.sh, reliability.md's pooled-memory table): a level run passes, and a
/// holding that grows, or any error DotNetty reports only to its own EventSource, fails it. One class, so that no other
/// test writes to DotNetty's EventSource while one listens.
/// </summary>
public sealed class PeersSoakVerdictTests
{
    private static readonly TimeSpan WarmUp = TimeSpan.FromMinutes(1);

    [Fact]
    public void A_level_run_passes()
    {
        using var events = new DotNettyEvents();

        var report = Judge(events, threadCaches: _ => 12);

        Assert.False(report.Failed, Verdicts(report));
    }

    [Fact]
    public void Thread_caches_that_keep_growing_fail_the_run_and_are_named()
    {
        // The thread-pool loop's worry: a pooled-allocator cache on every pool thread that ever ran a turn.
        using var events = new DotNettyEvents();

        var report = Judge(events, threadCaches: minute => 12 + (int)(3 * minute));

        Assert.True(report.Failed);
        Assert.Equal("DotNetty thread caches", Assert.Single(report.Metrics, m => m.Failed).Name);
    }

    [Fact]
    public void An_error_DotNetty_reports_to_its_EventSource_fails_a_level_run_and_its_text_is_kept()
    {
        using var events = new DotNettyEvents();
        DefaultEventSource.Log.Warning("ThreadLocalPool", "a warning is counted, and fails nothing");
        Assert.Equal(1, events.Warnings);
        Assert.False(Judge(events, threadCaches: _ => 12).Failed);

        DefaultEventSource.Log.Error("ThreadLocalPool", "WeakOrderQueue.Transfer threw", new NullReferenceException());
        var report = Judge(events, threadCaches: _ => 12);

        Assert.Equal(1, report.DotNettyErrors);
        Assert.True(report.Failed);
        Assert.Contains(report.DotNettyEvents, line => line.StartsWith("Error: ") && line.Contains("WeakOrderQueue.Transfer threw"));
    }

    // Ten minutes sampled every 30 s, everything level but the thread caches.
    private static PeersSoakReport Judge(DotNettyEvents events, Func<double, int> threadCaches)
    {
        var samples = Enumerable.Range(0, 21).Select(i => i * 0.5).Select(minute => new PeersSoakSample(
            minute,
            new ProcessSample(WorkingSetMb: 300, LiveHeapMb: 80, DotNettyPoolMb: 32, Gen2Collections: 0, RentedBuffers: 0, DotNettyBuffers: 100, OpenFiles: 140, Threads: 40, CpuMs: minute * 1000),
            threadCaches(minute),
            events.Warnings,
            events.Errors,
            RoundTripsPerSec: 2000,
            RttP99Us: 900,
            CpuUsPerRoundTrip: 30)).ToList();
        return PeersSoakReport.Of("flushbatching-dotnetty", tls: false, peers: 100, rate: 20, payload: 1000, TimeSpan.FromMinutes(10), samples, events, WarmUp);
    }

    private static string Verdicts(PeersSoakReport report) =>
        string.Join("; ", report.Metrics.Select(m => $"{m.Name}: {m.First} -> {m.Last} (allowed {m.Allowed})"));
}
