namespace RemotePingPong.Soak;

/// <summary>A soak's samples and the verdict on each quantity watched, as printed and written to the JSON file.</summary>
public sealed record SoakReport(
    string Machine,
    string Transport,
    bool Tls,
    int Clients,
    int Payload,
    double Minutes,
    double CycleMinutes,
    int Cycles,
    List<SoakSample> Samples,
    List<SoakMetric> Metrics)
{
    /// <summary>Whether anything grew (or the rate fell) by more than its allowance.</summary>
    public bool Failed => Metrics.Any(m => m.Failed);

    /// <summary>Judges every quantity over the samples taken after <paramref name="warmUp"/>.</summary>
    public static SoakReport Of(
        string transport, bool tls, int clients, int payload, TimeSpan duration, TimeSpan cycle, int cycles, List<SoakSample> samples, TimeSpan warmUp)
    {
        var judge = new SoakJudge<SoakSample>(samples, s => s.Minute, warmUp);

        var metrics = new List<SoakMetric>();
        foreach (var (side, of) in new (string, Func<SoakSample, ProcessSample>)[] { ("client", s => s.Client), ("server", s => s.Server) })
        {
            // DotNetty's pool is judged against its own bound; the rest of the memory must stay level.
            metrics.Add(judge.Judge($"{side} working set outside DotNetty's pool [MB]", s => of(s).WorkingSetMb - of(s).DotNettyPoolMb, 0.10, 16));
            metrics.Add(judge.Judge($"{side} live heap outside DotNetty's pool [MB]", s => of(s).LiveHeapMb - of(s).DotNettyPoolMb, 0.10, 4));
            metrics.Add(judge.Judge($"{side} DotNetty's pool [MB]", s => of(s).DotNettyPoolMb, 0, ProcessSample.DotNettyPoolBoundMb));
            metrics.Add(judge.Judge($"{side} FlushBatching buffers rented", s => of(s).RentedBuffers, 0, 16));
            metrics.Add(judge.Judge($"{side} DotNetty pooled buffers out", s => of(s).DotNettyBuffers, 0.10, 64));
            metrics.Add(judge.Judge($"{side} open file descriptors", s => of(s).OpenFiles, 0, 8));
            metrics.Add(judge.Judge($"{side} threads", s => of(s).Threads, 0.10, 4));
        }

        metrics.Add(judge.Judge("gen2 collections per minute", s => s.Gen2PerMinute, 0.5, 1));
        metrics.Add(judge.Judge("msgs/sec", s => s.MsgsPerSec, 0.25, 0, higherIsWorse: false));
        metrics.Add(judge.Judge("CPU per message [us]", s => s.CpuUsPerMessage, 0.25, 0));
        return new SoakReport(
            Report.ThisMachine,
            transport, tls, clients, payload, duration.TotalMinutes, cycle.TotalMinutes, cycles, samples, metrics);
    }

    /// <summary>The verdicts as a table on standard output.</summary>
    public void Print()
    {
        Console.WriteLine();
        Console.WriteLine(
            $"Soak: {Transport}{(Tls ? " over TLS" : "")}, {Clients} clients, {Payload} B, {Minutes:N0} min, connections re-made every " +
            $"{CycleMinutes:N0} min ({Cycles} times), {Samples.Count} samples");
        Console.WriteLine("Medians of the first and last third of the samples after the warm-up; slope by least squares.");
        Console.WriteLine($"{"quantity",-48}{"first",12}{"last",12}{"slope /h",12}{"allowed",10}  verdict");
        foreach (var m in Metrics)
        {
            Console.WriteLine($"{m.Name,-48}{m.First,12:N1}{m.Last,12:N1}{m.SlopePerHour,12:N1}{m.Allowed,10:N1}  {(m.Failed ? (m.HigherIsWorse ? "GREW" : "FELL") : "level")}");
        }
    }
}
