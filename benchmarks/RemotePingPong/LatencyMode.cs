using static RemotePingPong.Interleaving;
using static RemotePingPong.Summary;

namespace RemotePingPong;

/// <summary>The light-load latency table: one client, one message in flight, percentiles per transport.</summary>
internal static class LatencyMode
{
    // Interleaved like the throughput rows (each run visits every transport in turn), so a slow spell of the machine
    // falls on all of them; percentiles are medians over the runs.
    public static async Task RunAsync(EchoHost echoes, TransportUnderTest[] transports, int roundTrips, int repeat, int payload, Report report)
    {
        await Interleaved(repeat, [roundTrips], transports, async (r, _, transport) =>
        {
            var result = await PingPongRun.LatencyAsync(echoes, transport, r, roundTrips, payload);
            report.Latency.Add(result);
            return $"{result.Transport} latency: p50 {result.P50Us:N0} us, p99 {result.P99Us:N0} us, {result.CpuUsPerRoundTrip:N1} us CPU per round trip";
        });

        // Light load is judged against Akka without batching, which flushes every message at once.
        var reference = transports.Any(t => t.Name == TransportUnderTest.StockNoBatching) ? TransportUnderTest.StockNoBatching : TransportUnderTest.Stock;
        var referenceP50 = report.Latency.Where(l => l.Transport == reference).Select(l => l.P50Us).ToList();
        Console.WriteLine();
        Console.WriteLine($"Latency: 1 client, 1 message in flight, {roundTrips} round trips after {PingPongRun.UntimedRoundTrips(roundTrips)} untimed; medians of {repeat} run(s), max over all");
        Console.WriteLine($"{"Transport",-24}{"p50 [us]",10}{"CV",6}{"vs " + reference,22}{"p90 [us]",10}{"p99 [us]",10}{"max [us]",10}{"CPU [us/rt]",13}{"CV",6}");
        foreach (var transport in transports)
        {
            var results = report.Latency.Where(l => l.Transport == transport.Name).ToList();
            var p50 = Median(results.Select(l => l.P50Us));
            var ratio = referenceP50.Count > 0 ? $"{p50 / Median(referenceP50):N2}x" : "-";
            Console.WriteLine(
                $"{transport.Name,-24}{p50,10:N0}{Cv(results.Select(l => l.P50Us)),6:P0}{ratio,22}" +
                $"{Median(results.Select(l => l.P90Us)),10:N0}{Median(results.Select(l => l.P99Us)),10:N0}{results.Max(l => l.MaxUs),10:N0}" +
                $"{Median(results.Select(l => l.CpuUsPerRoundTrip)),13:N1}{Cv(results.Select(l => l.CpuUsPerRoundTrip)),6:P0}");
        }
    }
}
