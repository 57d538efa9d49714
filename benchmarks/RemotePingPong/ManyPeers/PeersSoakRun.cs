using System.Diagnostics;
using Akka.Actor;
using DotNetty.Buffers;
using RemotePingPong.Soak;

namespace RemotePingPong.ManyPeers;

/// <summary>
/// <c>--peers N --soak MINUTES</c>: a hub ActorSystem in this process and N peer systems in processes of
/// <see cref="ManyPeersRun.PeersPerProcess"/>, one association each, the hub pinging every peer
/// <c>--peers-rate</c> times a second for the whole run. The hub is sampled every <c>--sample-every</c> seconds: its
/// memory, DotNetty's pooled allocator (the chunks its arenas hold, its thread caches, its buffers out) and every
/// warning and error DotNetty's EventSource reports; each holding is judged as the soak's are (<see cref="SoakMetric"/>).
/// It is how the DotNetty stack's loops are compared on what their threads do to DotNetty's per-thread pools.
/// </summary>
internal static class PeersSoakRun
{
    private static readonly TimeSpan WarmUp = TimeSpan.FromMinutes(2);
    private static readonly TimeSpan Patience = TimeSpan.FromMinutes(3);

    public static async Task<PeersSoakReport> RunAsync(
        TransportUnderTest transport, bool tls, int peers, int rate, int payload, TimeSpan duration, TimeSpan sampleEvery, IReadOnlyList<string> passOn)
    {
        using var events = new DotNettyEvents();
        var hub = ActorSystem.Create("hub", PingPongRun.Config(transport, PingPongRun.ClientHostname, ""));
        var processes = new List<Process>();
        var samples = new List<PeersSoakSample>();
        try
        {
            var registry = hub.ActorOf(Props.Create(() => new PeerRegistry(rate, payload)), PeerRegistry.Name);
            var address = ((ExtendedActorSystem)hub).Provider.DefaultAddress.ToString();
            for (var left = peers; left > 0; left -= ManyPeersRun.PeersPerProcess)
            {
                processes.Add(ManyPeersRun.StartPeers(address, transport.Name, Math.Min(left, ManyPeersRun.PeersPerProcess), passOn));
            }

            await ManyPeersRun.WhenRegistered(registry, peers, processes);
            await registry.Ask<bool>(new PeerRegistry.OpenWindow(), Patience);
            var started = Stopwatch.GetTimestamp();
            var before = ProcessSample.Now();
            var at = TimeSpan.Zero;
            using var timer = new PeriodicTimer(sampleEvery);
            while (samples.Count < (int)(duration / sampleEvery) && await timer.WaitForNextTickAsync())
            {
                if (processes.FirstOrDefault(process => process.HasExited) is { } exited)
                {
                    throw new TimeoutException($"a peer process exited with code {exited.ExitCode} {Stopwatch.GetElapsedTime(started).TotalMinutes:N1} minutes in");
                }

                var trips = await registry.Ask<PeerRegistry.RoundTrips>(new PeerRegistry.CloseWindow(), Patience);
                await registry.Ask<bool>(new PeerRegistry.OpenWindow(), Patience);
                var now = ProcessSample.Now();
                var elapsed = Stopwatch.GetElapsedTime(started);
                var sample = new PeersSoakSample(
                    elapsed.TotalMinutes,
                    now,
                    PooledByteBufferAllocator.Default.Metric.NumThreadLocalCaches(),
                    events.Warnings,
                    events.Errors,
                    trips.Count / (elapsed - at).TotalSeconds,
                    trips.P99Us,
                    trips.Count > 0 ? (now.CpuMs - before.CpuMs) * 1000 / trips.Count : 0);
                samples.Add(sample);
                Console.Error.WriteLine(
                    $"[{sample.Minute:N1} min] {sample.RoundTripsPerSec:N0} round trips/s, p99 {sample.RttP99Us:N0} us, {sample.CpuUsPerRoundTrip:N1} us CPU each; " +
                    $"hub {now.WorkingSetMb:N0} MB, live heap {now.LiveHeapMb:N1} MB, DotNetty's pool {now.DotNettyPoolMb:N0} MB, {sample.ThreadCaches} thread caches, " +
                    $"{now.DotNettyBuffers} pooled buffers out, {now.Threads} threads; DotNetty {events.Warnings} warnings, {events.Errors} errors");
                (before, at) = (now, elapsed);
            }
        }
        finally
        {
            ManyPeersRun.StopPeers(processes);
            await hub.Terminate();
        }

        return PeersSoakReport.Of(transport.Name, tls, peers, rate, payload, duration, samples, events, TimeSpan.FromTicks(Math.Min(WarmUp.Ticks, duration.Ticks / 5)));
    }
}
