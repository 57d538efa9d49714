using RemotePingPong.Soak;

namespace RemotePingPong.ManyPeers;

/// <summary>A peers soak's samples and verdicts, as printed and written to the JSON file.</summary>
/// <param name="DotNettyEvents">The first warnings and errors DotNetty's EventSource reported, if any.</param>
public sealed record PeersSoakReport(
    string Machine,
    string Transport,
    bool Tls,
    int Peers,
    int PingsPerPeerPerSecond,
    int Payload,
    double Minutes,
    List<PeersSoakSample> Samples,
    List<SoakMetric> Metrics,
    long DotNettyWarnings,
    long DotNettyErrors,
    IReadOnlyList<string> DotNettyEvents)
{
    /// <summary>Whether anything grew (or the rate fell) by more than its allowance, or DotNetty reported an error.</summary>
    public bool Failed => DotNettyErrors > 0 || Metrics.Any(m => m.Failed);

    /// <summary>Judges every holding over the samples taken after <paramref name="warmUp"/>.</summary>
    internal static PeersSoakReport Of(
        string transport, bool tls, int peers, int rate, int payload, TimeSpan duration, List<PeersSoakSample> samples, DotNettyEvents events, TimeSpan warmUp)
    {
        var judge = new SoakJudge<PeersSoakSample>(samples, s => s.Minute, warmUp);

        List<SoakMetric> metrics =
        [
            judge.Judge("hub working set outside DotNetty's pool [MB]", s => s.Hub.WorkingSetMb - s.Hub.DotNettyPoolMb, 0.10, 16),
            judge.Judge("hub live heap outside DotNetty's pool [MB]", s => s.Hub.LiveHeapMb - s.Hub.DotNettyPoolMb, 0.10, 4),
            judge.Judge("DotNetty's pool [MB]", s => s.Hub.DotNettyPoolMb, 0, ProcessSample.DotNettyPoolBoundMb),
            judge.Judge("DotNetty thread caches", s => s.ThreadCaches, 0.10, 4),
            judge.Judge("DotNetty pooled buffers out", s => s.Hub.DotNettyBuffers, 0.10, 64),
            judge.Judge("hub threads", s => s.Hub.Threads, 0.10, 4),
            judge.Judge("hub open file descriptors", s => s.Hub.OpenFiles, 0, 8),
            judge.Judge("round trips/sec", s => s.RoundTripsPerSec, 0.25, 0, higherIsWorse: false),
            judge.Judge("hub CPU per round trip [us]", s => s.CpuUsPerRoundTrip, 0.25, 0),
        ];
        return new PeersSoakReport(
            Report.ThisMachine, transport, tls, peers, rate, payload, duration.TotalMinutes, samples, metrics, events.Warnings, events.Errors, events.First);
    }

    /// <summary>The verdicts as a table on standard output.</summary>
    public void Print()
    {
        Console.WriteLine();
        Console.WriteLine(
            $"Peers soak: {Transport}{(Tls ? " over TLS" : "")}, {Peers} peers, {PingsPerPeerPerSecond} pings/s each of {Payload} B, {Minutes:N0} min, {Samples.Count} samples");
        Console.WriteLine("The hub process; medians of the first and last third of the samples after the warm-up; slope by least squares.");
        Console.WriteLine($"{"quantity",-48}{"first",12}{"last",12}{"slope /h",12}{"allowed",10}  verdict");
        foreach (var m in Metrics)
        {
            Console.WriteLine($"{m.Name,-48}{m.First,12:N1}{m.Last,12:N1}{m.SlopePerHour,12:N1}{m.Allowed,10:N1}  {(m.Failed ? (m.HigherIsWorse ? "GREW" : "FELL") : "level")}");
        }

        Console.WriteLine($"DotNetty's EventSource: {DotNettyWarnings} warnings, {DotNettyErrors} errors{(DotNettyErrors > 0 ? "  FAILED" : "")}");
        foreach (var line in DotNettyEvents)
        {
            Console.WriteLine($"  {line}");
        }
    }
}
