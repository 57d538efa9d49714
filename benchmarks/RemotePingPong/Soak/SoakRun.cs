using System.Diagnostics;
using System.Runtime.CompilerServices;
using Akka.Actor;
using FlushBatching.Tests.Support;

namespace RemotePingPong.Soak;

/// <summary>
/// <c>--soak MINUTES</c>: steady RemotePingPong load from this process against one echo system in the server process
/// for the whole run, both on one transport. Every <c>--soak-cycle</c> minutes the client side terminates its
/// ActorSystem, which drops its connections, and starts a new one, which makes new ones; the echo system stays up and
/// sees them all. Both processes are sampled every <c>--sample-every</c> seconds, and each holding is judged by
/// <see cref="SoakMetric"/>.
/// </summary>
internal static class SoakRun
{
    // Left out of every verdict: the JIT, the thread pool and the pools are still settling. A fifth of a short run.
    private static readonly TimeSpan WarmUp = TimeSpan.FromMinutes(2);

    /// <summary>The section lines that put both sides on TLS with <paramref name="certificate"/>, checked by neither.</summary>
    public static string TlsSection(SelfSignedCertificate certificate) => $$"""
        enable-ssl = on
        ssl {
          certificate { path = "{{certificate.PfxPath}}", password = "{{SelfSignedCertificate.Password}}" }
          suppress-validation = on
        }
        """;

    public static async Task<SoakReport> RunAsync(
        RemoteEchoHost echoes, TransportUnderTest transport, bool tls, int clients, int payload, TimeSpan duration, TimeSpan cycle, TimeSpan sampleEvery)
    {
        var echoAddress = await echoes.StartStandingAsync(transport, clients);
        var received = new StrongBox<long>();
        var cycles = new StrongBox<int>();
        var samples = new List<SoakSample>();
        var started = Stopwatch.GetTimestamp();
        using var stop = new CancellationTokenSource();
        try
        {
            var load = Cycle(echoAddress, transport, clients, payload, cycle, received, cycles, stop.Token);
            await Sample(echoes, received, cycles, started, sampleEvery, (int)(duration / sampleEvery), samples, load);
            await stop.CancelAsync();
            await load;
        }
        finally
        {
            await echoes.StopAsync();
        }

        return SoakReport.Of(transport.Name, tls, clients, payload, duration, cycle, cycles.Value, samples, TimeSpan.FromTicks(Math.Min(WarmUp.Ticks, duration.Ticks / 5)));
    }

    private static async Task Cycle(
        Address echoAddress, TransportUnderTest transport, int clients, int payload, TimeSpan cycle, StrongBox<long> received, StrongBox<int> cycles, CancellationToken stop)
    {
        while (!stop.IsCancellationRequested)
        {
            var system = ActorSystem.Create("soak-clients", PingPongRun.Config(transport, PingPongRun.ClientHostname, ""));
            try
            {
                for (var i = 0; i < clients; i++)
                {
                    var path = new RootActorPath(echoAddress) / "user" / EchoServer.StandingEcho(i);
                    var echo = await system.ActorSelection(path).ResolveOne(TimeSpan.FromSeconds(30));
                    system.ActorOf(Props.Create(() => new SoakPinger(echo, payload, received)), $"pinger-{i}").Tell(SoakPinger.Begin);
                }

                await Task.Delay(cycle, stop).ContinueWith(_ => { }, TaskScheduler.Default);
            }
            finally
            {
                await system.Terminate();
                cycles.Value++;
            }
        }
    }

    private static async Task Sample(
        RemoteEchoHost echoes, StrongBox<long> received, StrongBox<int> cycles, long started, TimeSpan every, int count, List<SoakSample> samples, Task load)
    {
        var client = ProcessSample.Now();
        var server = await echoes.SampleAsync();
        var messages = Interlocked.Read(ref received.Value);
        var at = Stopwatch.GetElapsedTime(started);
        using var timer = new PeriodicTimer(every);
        // Until the time is up, or the load has failed (an echo not found): its error ends the run.
        while (samples.Count < count && !load.IsCompleted && await timer.WaitForNextTickAsync())
        {
            var clientNow = ProcessSample.Now();
            var serverNow = await echoes.SampleAsync();
            var messagesNow = Interlocked.Read(ref received.Value);
            var now = Stopwatch.GetElapsedTime(started);

            // Each round trip is two messages, as in the benchmark's rows.
            var sent = 2.0 * (messagesNow - messages);
            var cpuMs = clientNow.CpuMs - client.CpuMs + serverNow.CpuMs - server.CpuMs;
            var sample = new SoakSample(
                now.TotalMinutes,
                cycles.Value,
                clientNow,
                serverNow,
                sent / (now - at).TotalSeconds,
                sent > 0 ? cpuMs * 1000 / sent : 0,
                (clientNow.Gen2Collections - client.Gen2Collections + serverNow.Gen2Collections - server.Gen2Collections) / (now - at).TotalMinutes);
            samples.Add(sample);
            Console.Error.WriteLine(
                $"[{sample.Minute:N1} min] {sample.MsgsPerSec:N0} msgs/sec, {sample.CpuUsPerMessage:N2} us CPU/msg; " +
                $"client {clientNow.WorkingSetMb:N0} MB, {clientNow.OpenFiles} fds, {clientNow.Threads} threads; " +
                $"server {serverNow.WorkingSetMb:N0} MB, {serverNow.OpenFiles} fds, {serverNow.Threads} threads");
            (client, server, messages, at) = (clientNow, serverNow, messagesNow, now);
        }
    }
}
