using System.Diagnostics;
using Akka.Actor;
using Akka.Configuration;
using Akka.Remote;
using FlushBatching.Benchmarks.Shared;

namespace RemotePingPong;

/// <summary>
/// Runs one row: a fresh client ActorSystem in this process and a fresh echo system from the <see cref="EchoHost"/>
/// (in this process or a server process), clients against echoes remote-deployed into it.
/// </summary>
internal static class PingPongRun
{
    /// <summary>Messages each client keeps in flight (<c>--in-flight</c>).</summary>
    public static int InFlight { get; set; } = 50;

    private static readonly TimeSpan RowTimeout = TimeSpan.FromMinutes(10);

    // The ceiling's echo systems, beside the clients whatever the role: its two ends must share this process.
    private static readonly InProcessEchoHost InProcess = new();

    /// <summary>The client side's bind address; the server role must be able to reach it when it runs elsewhere.</summary>
    public static string ClientHostname { get; set; } = "127.0.0.1";

    /// <summary>A node's configuration on <paramref name="transport"/>, bound to <paramref name="hostname"/> on a free port.</summary>
    public static Config Config(TransportUnderTest transport, string hostname, string publicHostname) => ConfigurationFactory.ParseString($$"""
        akka {
          # Every message is checked by the benchmark itself; Akka would only log the disassociations of shutdown.
          loglevel = OFF
          stdout-loglevel = OFF
          actor.provider = remote
          remote.dot-netty.tcp {
            hostname = "{{hostname}}"
            public-hostname = "{{publicHostname}}"
            port = 0
            transport-class = "{{transport.TransportClass}}"
            {{transport.Section}}
          }
        }
        """);

    /// <exception cref="TimeoutException">Messages did not all come back: the run must fail.</exception>
    public static async Task<RowResult> ThroughputAsync(
        EchoHost echoes, TransportUnderTest transport, int clients, int messages, int payload, FrameCounter counter)
    {
        echoes = HostFor(transport, echoes);
        var echoAddress = await echoes.StartAsync(transport);
        var clientSystem = StartClients(transport);
        try
        {
            var done = Enumerable.Range(0, clients).Select(_ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).ToArray();
            var pingers = await Deploy(clientSystem, echoAddress, clients, i => (messages, InFlight, done[i], null), payload);
            await echoes.BeginRowAsync();
            var before = counter.Take();
            var costBefore = ProcessCost.Now();
            var started = Stopwatch.GetTimestamp();
            foreach (var pinger in pingers)
            {
                pinger.Tell(PingClient.Begin);
            }

            await WhenAllBack(done, $"{transport.Name} at {clients} clients");
            var elapsed = Stopwatch.GetElapsedTime(started);
            var cost = ProcessCost.Now().Since(costBefore);
            var counted = counter.Take().Since(before);
            var echoCost = await echoes.EndRowAsync();
            if (echoCost is not null)
            {
                cost = cost.Plus(echoCost);
            }

            var total = 2L * clients * messages;
            return new RowResult(
                transport.Name,
                clients,
                total,
                total / elapsed.TotalSeconds,
                elapsed.TotalMilliseconds,
                cost.CpuMs * 1000 / total,
                (double)cost.AllocatedBytes / total,
                cost.Gen0,
                cost.Gen1,
                cost.Gen2,
                echoCost is null ? 1 : 2,
                transport.IsFlushBatching ? counted.Frames : null,
                transport.IsFlushBatching ? counted.Sends : null,
                transport.IsFlushBatching && counted.Sends > 0 ? (double)counted.Frames / counted.Sends : null,
                transport.IsFlushBatching ? counted.Flushes.Where(f => f.Value > 0).ToDictionary() : null,
                transport.IsFlushBatching ? transport.Section : null,
                transport.IsFlushBatching ? counted.QueueDelayP50Us : null,
                transport.IsFlushBatching ? counted.QueueDelayP99Us : null);
        }
        finally
        {
            // One after the other: the client side leaves first, so neither side reports the other vanishing mid-write.
            await clientSystem.Terminate();
            await echoes.StopAsync();
        }
    }

    /// <summary>The round trips a latency run makes before it starts timing: a tenth of the timed ones, at least one.</summary>
    public static int UntimedRoundTrips(int roundTrips) => Math.Max(roundTrips / 10, 1);

    /// <summary>
    /// One client with one message in flight: <paramref name="roundTrips"/> timed round trips after a tenth as many
    /// untimed ones, so the association, the JIT and the pools are settled when timing starts.
    /// </summary>
    /// <exception cref="TimeoutException">A message did not come back.</exception>
    public static async Task<LatencyResult> LatencyAsync(EchoHost echoes, TransportUnderTest transport, int run, int roundTrips, int payload)
    {
        echoes = HostFor(transport, echoes);
        var echoAddress = await echoes.StartAsync(transport);
        var clientSystem = StartClients(transport);
        try
        {
            var untimed = UntimedRoundTrips(roundTrips);
            var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            var ticks = new long[untimed + roundTrips];
            var pingers = await Deploy(clientSystem, echoAddress, 1, _ => (ticks.Length, 1, done, ticks), payload);
            await echoes.BeginRowAsync();
            var costBefore = ProcessCost.Now();
            pingers[0].Tell(PingClient.Begin);
            await WhenAllBack([done], $"{transport.Name} latency");
            var cost = ProcessCost.Now().Since(costBefore);
            if (await echoes.EndRowAsync() is { } echoCost)
            {
                cost = cost.Plus(echoCost);
            }

            var timed = ticks[untimed..];
            Array.Sort(timed);
            return new LatencyResult(
                transport.Name,
                run,
                roundTrips,
                Micros(timed, 0.50),
                Micros(timed, 0.90),
                Micros(timed, 0.99),
                Micros(timed, 1.0),
                cost.CpuMs * 1000 / ticks.Length);
        }
        finally
        {
            await clientSystem.Terminate();
            await echoes.StopAsync();
        }
    }

    private static EchoHost HostFor(TransportUnderTest transport, EchoHost echoes) => transport.InProcessOnly ? InProcess : echoes;

    private static ActorSystem StartClients(TransportUnderTest transport) =>
        ActorSystem.Create("pingpong-clients", Config(transport, ClientHostname, ""));

    private static async Task<IActorRef[]> Deploy(
        ActorSystem clientSystem,
        Address echoAddress,
        int clients,
        Func<int, (int Messages, int InFlight, TaskCompletionSource Done, long[]? Ticks)> client,
        int payload)
    {
        var pingers = new IActorRef[clients];
        for (var i = 0; i < clients; i++)
        {
            var echo = clientSystem.ActorOf(Props.Create<Echo>().WithDeploy(new Deploy(new RemoteScope(echoAddress))), $"echo-{i}");
            await echo.Ask<byte[]>(new byte[payload], TimeSpan.FromSeconds(30)); // the association is up before timing starts
            var (messages, inFlight, done, ticks) = client(i);
            pingers[i] = clientSystem.ActorOf(Props.Create(() => new PingClient(echo, messages, inFlight, payload, done, ticks)), $"client-{i}");
        }

        return pingers;
    }

    private static async Task WhenAllBack(TaskCompletionSource[] done, string what)
    {
        try
        {
            await Task.WhenAll(done.Select(d => d.Task)).WaitAsync(RowTimeout);
        }
        catch (TimeoutException)
        {
            throw new TimeoutException($"{what}: messages did not all come back within {RowTimeout.TotalMinutes} minutes.");
        }
    }

    private static double Micros(long[] sortedTicks, double quantile)
    {
        var index = Math.Clamp((int)Math.Ceiling(quantile * sortedTicks.Length) - 1, 0, sortedTicks.Length - 1);
        return sortedTicks[index] * 1_000_000.0 / Stopwatch.Frequency;
    }
}
