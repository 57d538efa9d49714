using FlushBatching.Benchmarks.Shared;
using static RemotePingPong.Summary;

namespace RemotePingPong;

/// <summary>The closed-loop throughput table: clients by transport, interleaved, medians with ratios to stock and the ceiling.</summary>
internal static class ThroughputMode
{
    public static async Task RunAsync(EchoHost echoes, TransportUnderTest[] transports, int[] clientCounts, int messages, int repeat, int payload, FrameCounter counter, Report report)
    {
        var runs = transports.Length * clientCounts.Length * repeat;
        var done = 0;
        foreach (var clients in clientCounts)
        {
            for (var r = 0; r < repeat; r++)
            {
                foreach (var transport in transports)
                {
                    var row = await PingPongRun.ThroughputAsync(echoes, transport, clients, messages, payload, counter);
                    report.Rows.Add(row);
                    Console.Error.WriteLine($"[{++done}/{runs}] {row.Transport} at {clients} clients: {row.MsgsPerSec:N0} msgs/sec, {row.CpuUsPerMessage:N2} us CPU/msg");
                }
            }
        }

        Console.WriteLine();
        var twoProcesses = report.Rows.Any(row => row.Processes == 2);
        Console.WriteLine($"Medians of {repeat} run(s); CV = coefficient of variation across runs; CPU, Alloc and GCs: {(twoProcesses ? "both processes, summed" : "this process (both systems)")}");
        if (twoProcesses)
        {
            Console.WriteLine("Frames/send and flushes: this process's (the clients') connections only");
        }
        foreach (var transport in transports)
        {
            Console.WriteLine();
            Console.WriteLine($"== {transport.Name} ==");
            Console.WriteLine($"Num clients, Total [msg], Msgs/sec, CV, vs stock, vs ceiling, CPU [us/msg], CV, CPU vs stock, Alloc [B/msg], GCs 0/1/2, Frames/send{(transport.IsFlushBatching ? ", Queue delay p50/p99 [us], Flushes by reason (all runs)" : "")}");
            foreach (var clients in clientCounts)
            {
                var rows = report.Rows.Where(row => row.Transport == transport.Name && row.Clients == clients).ToList();
                var rate = Median(rows.Select(row => row.MsgsPerSec));
                var cpu = Median(rows.Select(row => row.CpuUsPerMessage));
                var framesPerSend = rows.Select(row => row.FramesPerSend).OfType<double>().ToList();
                Console.WriteLine(
                    $"{clients}, {rows[0].Messages}, {rate:N0}, {Cv(rows.Select(row => row.MsgsPerSec)):P0}, " +
                    $"{Ratio(rate, TransportUnderTest.Stock, clients, row => row.MsgsPerSec)}, " +
                    $"{Ratio(rate, TransportUnderTest.Ceiling, clients, row => row.MsgsPerSec)}, " +
                    $"{cpu:N2}, {Cv(rows.Select(row => row.CpuUsPerMessage)):P0}, " +
                    $"{Ratio(cpu, TransportUnderTest.Stock, clients, row => row.CpuUsPerMessage)}, " +
                    $"{Median(rows.Select(row => row.AllocatedBytesPerMessage)):N0}, " +
                    $"{Median(rows.Select(row => (double)row.Gen0Collections)):N0}/{Median(rows.Select(row => (double)row.Gen1Collections)):N0}/{Median(rows.Select(row => (double)row.Gen2Collections)):N0}, " +
                    $"{(framesPerSend.Count > 0 ? Median(framesPerSend).ToString("N1") : "-")}{QueueDelay(rows.Select(row => row.QueueDelayP50Us), rows.Select(row => row.QueueDelayP99Us))}{Reasons(rows)}");
            }
        }

        // A median against the median of another transport's rows at the same client count; "-" when it did not run.
        string Ratio(double value, string reference, int clients, Func<RowResult, double> measure)
        {
            var theirs = report.Rows.Where(row => row.Transport == reference && row.Clients == clients).Select(measure).ToList();
            return theirs.Count > 0 ? $"{value / Median(theirs):N2}x" : "-";
        }
    }
}
