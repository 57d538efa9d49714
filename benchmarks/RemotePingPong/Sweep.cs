using FlushBatching.Benchmarks.Shared;

namespace RemotePingPong;

/// <summary>
/// The tuning sweep: every combination of max-pending-writes, max-pending-bytes and flush-interval on each FlushBatching
/// transport asked for (the sockets stack, the DotNetty stack on either loop kind), each run right beside stock so the
/// ratio compares like with like, and the best combination printed as a section to paste, per transport.
/// </summary>
internal static class Sweep
{
    /// <summary>The transports a sweep can tune: those with batching keys of their own.</summary>
    public static readonly string[] Candidates =
        [TransportUnderTest.FlushBatching, TransportUnderTest.FlushBatchingDotNetty, TransportUnderTest.FlushBatchingDotNettyDedicated];

    public static async Task RunAsync(
        EchoHost echoes,
        string[] candidates,
        List<(string Writes, string Bytes, string Interval)> grid,
        string section,
        int[] clientCounts,
        int messages,
        int repeat,
        int payload,
        FrameCounter counter,
        Report report)
    {
        var stock = TransportUnderTest.Create(TransportUnderTest.Stock, "");
        var runs = candidates.Length * clientCounts.Length * grid.Count * repeat * 2;
        var done = 0;
        foreach (var name in candidates)
        {
            foreach (var clients in clientCounts)
            {
                foreach (var (writes, bytes, interval) in grid)
                {
                    var candidate = TransportUnderTest.Create(
                        name,
                        $"{section}\nbatching {{ max-pending-writes = {writes}, max-pending-bytes = {bytes}, flush-interval = {interval} }}");
                    var ours = new List<double>();
                    var theirs = new List<double>();
                    for (var r = 0; r < repeat; r++)
                    {
                        theirs.Add((await PingPongRun.ThroughputAsync(echoes, stock, clients, messages, payload, counter)).MsgsPerSec);
                        ours.Add((await PingPongRun.ThroughputAsync(echoes, candidate, clients, messages, payload, counter)).MsgsPerSec);
                        done += 2;
                        Console.Error.WriteLine($"[{done}/{runs}] {name}, {clients} clients, writes {writes}, bytes {bytes}, interval {interval}: {ours[^1]:N0} vs stock {theirs[^1]:N0} msgs/sec");
                    }

                    var median = Median(ours);
                    var stockMedian = Median(theirs);
                    report.Sweep.Add(new SweepResult(name, writes, bytes, interval, clients, median, stockMedian, median / stockMedian));
                }
            }
        }

        foreach (var transport in report.Sweep.GroupBy(r => r.Transport))
        {
            Print(transport.Key, transport.ToList());
        }
    }

    private static void Print(string transport, List<SweepResult> results)
    {
        Console.WriteLine();
        Console.WriteLine($"Sweep: {transport} at each combination, each beside stock (median msgs/sec)");
        Console.WriteLine($"{"Clients",8}{"max-pending-writes",20}{"max-pending-bytes",19}{"flush-interval",16}{"Msgs/sec",12}{"Stock",12}{"Ratio",8}");
        foreach (var result in results)
        {
            Console.WriteLine($"{result.Clients,8}{result.MaxPendingWrites,20}{result.MaxPendingBytes,19}{result.FlushInterval,16}{result.MsgsPerSec,12:N0}{result.StockMsgsPerSec,12:N0}{result.Ratio,7:N2}x");
        }

        Console.WriteLine();
        Console.WriteLine($"Best per client count for {transport} (by ratio to stock):");
        foreach (var group in results.GroupBy(r => r.Clients))
        {
            var best = group.MaxBy(r => r.Ratio)!;
            Console.WriteLine($"  {group.Key} clients: max-pending-writes = {best.MaxPendingWrites}, max-pending-bytes = {best.MaxPendingBytes}, flush-interval = {best.FlushInterval} ({best.Ratio:N2}x stock)");
        }

        // Across client counts, the combination with the best geometric mean of its ratios.
        var overall = results
            .GroupBy(r => (r.MaxPendingWrites, r.MaxPendingBytes, r.FlushInterval))
            .MaxBy(g => g.Average(r => Math.Log(r.Ratio)))!.Key;
        var stack = TransportUnderTest.Create(transport, "");
        Console.WriteLine();
        Console.WriteLine($"Best across client counts for {transport}; paste into your akka.remote.dot-netty.tcp section:");
        Console.WriteLine($"transport-class = \"{stack.TransportClass}\"");
        if (transport != TransportUnderTest.FlushBatching)
        {
            Console.WriteLine($"event-loop = {(transport == TransportUnderTest.FlushBatchingDotNettyDedicated ? "dedicated" : "thread-pool")}");
        }

        Console.WriteLine("batching {");
        Console.WriteLine($"  max-pending-writes = {overall.MaxPendingWrites}");
        Console.WriteLine($"  max-pending-bytes = {overall.MaxPendingBytes}");
        Console.WriteLine($"  flush-interval = {overall.FlushInterval}");
        Console.WriteLine("}");
    }

    /// <summary>The middle value, or the mean of the two middle values.</summary>
    public static double Median(IEnumerable<double> values)
    {
        var sorted = values.Order().ToArray();
        return sorted.Length % 2 == 1 ? sorted[sorted.Length / 2] : (sorted[(sorted.Length / 2) - 1] + sorted[sorted.Length / 2]) / 2;
    }
}
