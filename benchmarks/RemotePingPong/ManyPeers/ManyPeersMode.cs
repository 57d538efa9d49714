using static RemotePingPong.Interleaving;
using static RemotePingPong.Summary;

namespace RemotePingPong.ManyPeers;

/// <summary>The many-peers table: peer systems in child processes, what the hub holds per association.</summary>
internal static class ManyPeersMode
{
    // Step by step, each transport in turn within a step, so a slow spell of the machine falls on all of them; medians
    // over the runs. Per association: what the hub holds with every peer up, less what it held before they came, over the
    // number of peers.
    public static async Task RunAsync(TransportUnderTest[] transports, int[] steps, TimeSpan window, int repeat, string[] passOn, Report report)
    {
        Console.WriteLine($"many peers: {string.Join(", ", steps)} peer systems in processes of {ManyPeersRun.PeersPerProcess}, one ping a second each, {window.TotalSeconds:N0} s measured");
        foreach (var transport in transports)
        {
            await ManyPeersRun.RunAsync(transport, 0, 1, TimeSpan.FromSeconds(1), passOn); // warm-up, not counted
        }

        await Interleaved(repeat, steps, transports, async (r, peers, transport) =>
        {
            var row = await ManyPeersRun.RunAsync(transport, r, peers, window, passOn);
            report.ManyPeers.Add(row);
            return $"{row.Transport} with {peers} peers: working set +{row.WorkingSetMb - row.BaselineWorkingSetMb:N1} MB, " +
                $"{row.Threads - row.BaselineThreads:+0;-0} threads, {row.OpenFiles - row.BaselineOpenFiles:+0;-0} fds, {row.CpuPercentOfCore:N1}% of a core, p99 {row.RttP99Us:N0} us";
        });

        PrintTable(
            $"Medians of {repeat} run(s); the hub process only; per association = (with the peers - before them) / peers",
            "Transport, Peers, Working set [MB], per assoc [KB], Live heap per assoc [KB], Threads +, Fds +, CPU [% of a core], Round trips, p50 [us], p99 [us]",
            transports,
            steps,
            (transport, peers) => report.ManyPeers.Where(row => row.Transport == transport && row.Peers == peers).ToList(),
            (peers, rows) => $"{Median(rows.Select(row => row.WorkingSetMb)):N0}, " +
                $"{Median(rows.Select(row => (row.WorkingSetMb - row.BaselineWorkingSetMb) * 1024 / peers)):N0}, " +
                $"{Median(rows.Select(row => (row.LiveHeapMb - row.BaselineLiveHeapMb) * 1024 / peers)):N0}, " +
                $"{Median(rows.Select(row => (double)(row.Threads - row.BaselineThreads))):N0}, {Median(rows.Select(row => (double)(row.OpenFiles - row.BaselineOpenFiles))):N0}, " +
                $"{Median(rows.Select(row => row.CpuPercentOfCore)):N1}, {Median(rows.Select(row => (double)row.RoundTrips)):N0}, " +
                $"{Median(rows.Select(row => row.RttP50Us)):N0}, {Median(rows.Select(row => row.RttP99Us)):N0}");
    }
}
