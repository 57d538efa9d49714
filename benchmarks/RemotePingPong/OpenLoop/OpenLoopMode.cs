using FlushBatching.Benchmarks.Shared;
using static RemotePingPong.Interleaving;
using static RemotePingPong.Summary;

namespace RemotePingPong.OpenLoop;

/// <summary>The open-loop table: offered rates by transport, latency from each message's due time, the highest rate held under the p99 bound.</summary>
internal static class OpenLoopMode
{
    // Rate by rate, each transport in turn within a rate, so a slow spell of the machine falls on all of them; the table
    // gives medians over the runs, and per transport the highest rate whose p99 stayed under the bound with every
    // message back.
    public static async Task RunAsync(
        EchoHost echoes, TransportUnderTest[] transports, int clients, int[] rates, TimeSpan duration, double p99BoundMs, int repeat, int payload, FrameCounter counter, Report report)
    {
        Console.WriteLine($"open loop: {clients} clients, {payload} B payload, {duration.TotalSeconds:N0} s per rate, latency from each message's due time");
        await WarmUp.UntilJitQuietAsync(async () =>
        {
            foreach (var transport in transports)
            {
                await OpenLoopRun.RunAsync(echoes, transport, 0, clients, rates[0], TimeSpan.FromSeconds(2), payload, counter); // not counted
            }
        });

        await Interleaved(repeat, rates, transports, async (r, rate, transport) =>
        {
            var row = await OpenLoopRun.RunAsync(echoes, transport, r, clients, rate, duration, payload, counter);
            report.OpenLoop.Add(row);
            return $"{row.Transport} at {rate:N0}/s: p50 {row.P50Us:N0} us, p99 {row.P99Us:N0} us{(row.Sustained ? "" : ", NOT all back")}";
        });

        PrintTable(
            $"Medians of {repeat} run(s); latency [us] from each message's due time; 'all back' = every message came back within 10 s of the last one due",
            "Transport, Offered [rt/s], Achieved [rt/s], p50, p99, p99.9, max, all back, queue delay p50/p99 [us]",
            transports,
            rates,
            (transport, rate) => report.OpenLoop.Where(row => row.Transport == transport && row.OfferedPerSec == rate).ToList(),
            (_, rows) => $"{Median(rows.Select(row => row.AchievedPerSec)):N0}, {Median(rows.Select(row => row.P50Us)):N0}, " +
                $"{Median(rows.Select(row => row.P99Us)):N0}, {Median(rows.Select(row => row.P999Us)):N0}, {Median(rows.Select(row => row.MaxUs)):N0}, {(rows.All(row => row.Sustained) ? "yes" : "no")}" +
                QueueDelay(rows.Select(row => row.QueueDelayP50Us), rows.Select(row => row.QueueDelayP99Us)));

        Console.WriteLine();
        Console.WriteLine($"Highest offered rate with p99 under {p99BoundMs} ms and every message back:");
        var best = transports.ToDictionary(t => t.Name, t => rates
            .Where(rate => report.OpenLoop.Where(row => row.Transport == t.Name && row.OfferedPerSec == rate) is var rows
                && rows.All(row => row.Sustained) && Median(rows.Select(row => row.P99Us)) < p99BoundMs * 1000)
            .DefaultIfEmpty(0).Max());
        foreach (var (name, rate) in best)
        {
            var stock = best.GetValueOrDefault(TransportUnderTest.Stock);
            Console.WriteLine($"{name}: {rate:N0} rt/s{(stock > 0 && name != TransportUnderTest.Stock ? $" ({(double)rate / stock:N2}x stock)" : "")}");
        }
    }
}
