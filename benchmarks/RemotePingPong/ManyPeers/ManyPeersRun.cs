using System.Diagnostics;
using Akka.Actor;
using RemotePingPong.Soak;

namespace RemotePingPong.ManyPeers;

/// <summary>
/// One step of the many-peers mode: a fresh hub ActorSystem in this process, then this many peer ActorSystems in
/// processes of <see cref="PeersPerProcess"/> each (<see cref="PeersRole"/>), each peer associated with the hub and
/// pinged by it once a second; the hub process is sampled before the peers come and with all of them up.
/// </summary>
internal static class ManyPeersRun
{
    /// <summary>Peer systems per peer process: 200 peers are four processes.</summary>
    public const int PeersPerProcess = 50;

    private static readonly TimeSpan Settle = TimeSpan.FromSeconds(5);
    private static readonly TimeSpan Patience = TimeSpan.FromMinutes(3);

    /// <param name="passOn">The command line's transport options (<c>--set</c>, <c>--maximum-frame-size</c>), for the peer processes.</param>
    /// <exception cref="TimeoutException">The peers did not all register within 3 minutes, or a counted run's window saw no round trip.</exception>
    public static async Task<ManyPeersResult> RunAsync(TransportUnderTest transport, int run, int peers, TimeSpan window, IReadOnlyList<string> passOn)
    {
        var hub = ActorSystem.Create("hub", PingPongRun.Config(transport, PingPongRun.ClientHostname, ""));
        var processes = new List<Process>();
        try
        {
            var registry = hub.ActorOf(Props.Create<PeerRegistry>(), PeerRegistry.Name);
            var address = ((ExtendedActorSystem)hub).Provider.DefaultAddress.ToString();
            await Task.Delay(Settle);
            var before = ProcessSample.Now();
            for (var left = peers; left > 0; left -= PeersPerProcess)
            {
                processes.Add(StartPeers(address, transport.Name, Math.Min(left, PeersPerProcess), passOn));
            }

            await WhenRegistered(registry, peers, processes);
            await Task.Delay(Settle);
            var with = ProcessSample.Now();
            var cost = ProcessCost.Now();
            await registry.Ask<bool>(new PeerRegistry.OpenWindow(), Patience);
            await Task.Delay(window);
            var trips = await registry.Ask<PeerRegistry.RoundTrips>(new PeerRegistry.CloseWindow(), Patience);
            var cpuMs = ProcessCost.Now().Since(cost).CpuMs;

            // Every peer is pinged once a second; the warm-up's short window (run 0) may end before its one ping is back.
            if (trips.Count == 0 && run > 0)
            {
                throw new TimeoutException($"no round trip to any of {peers} peers finished within the {window.TotalSeconds:N0} s window");
            }

            return new ManyPeersResult(
                transport.Name,
                run,
                peers,
                before.WorkingSetMb,
                with.WorkingSetMb,
                before.LiveHeapMb,
                with.LiveHeapMb,
                before.Threads,
                with.Threads,
                before.OpenFiles,
                with.OpenFiles,
                100 * cpuMs / window.TotalMilliseconds,
                trips.Count,
                trips.P50Us,
                trips.P99Us,
                trips.MaxUs);
        }
        finally
        {
            StopPeers(processes);
            await hub.Terminate();
        }
    }

    /// <summary>Closing their standard input stops the peers; one that does not stop in time is killed.</summary>
    public static void StopPeers(List<Process> processes)
    {
        foreach (var process in processes)
        {
            process.StandardInput.Close();
        }

        foreach (var process in processes)
        {
            if (!process.WaitForExit(TimeSpan.FromSeconds(40)))
            {
                process.Kill(entireProcessTree: true);
            }

            process.Dispose();
        }
    }

    /// <summary>A peer process of <paramref name="count"/> peer systems on <paramref name="transport"/>, registering with <paramref name="hub"/>.</summary>
    public static Process StartPeers(string hub, string transport, int count, IReadOnlyList<string> passOn)
    {
        var start = new ProcessStartInfo("dotnet") { RedirectStandardInput = true, UseShellExecute = false };
        foreach (var argument in (string[])[typeof(ManyPeersRun).Assembly.Location, "--role", "peers", "--hub", hub, "--transport", transport,
                     "--peers", count.ToString(System.Globalization.CultureInfo.InvariantCulture), "--hostname", PingPongRun.ClientHostname, .. passOn])
        {
            start.ArgumentList.Add(argument);
        }

        return Process.Start(start) ?? throw new InvalidOperationException("dotnet did not start");
    }

    /// <exception cref="TimeoutException">Not every peer registered within 3 minutes, or a peer process exited.</exception>
    public static async Task WhenRegistered(IActorRef registry, int peers, List<Process> processes)
    {
        var deadline = Stopwatch.StartNew();
        while (await registry.Ask<int>(new PeerRegistry.CountPeers(), Patience) is var registered && registered < peers)
        {
            if (processes.FirstOrDefault(process => process.HasExited) is { } exited)
            {
                throw new TimeoutException($"a peer process exited with code {exited.ExitCode} after {registered} of {peers} peers registered");
            }

            if (deadline.Elapsed > Patience)
            {
                throw new TimeoutException($"{registered} of {peers} peers registered within {Patience.TotalMinutes} minutes");
            }

            await Task.Delay(500);
        }
    }
}
