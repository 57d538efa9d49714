using System.Diagnostics;
using Akka.Actor;
using Akka.Configuration;
using Akka.Remote;

namespace RemotePingPong;

/// <summary>Runs one row: two fresh ActorSystems on 127.0.0.1 over the transport, clients against remote-deployed echoes.</summary>
internal static class PingPongRun
{
    public const int InFlight = 50;

    private static readonly TimeSpan RowTimeout = TimeSpan.FromMinutes(10);

    /// <exception cref="TimeoutException">Messages did not all come back: the run must fail.</exception>
    public static async Task<RowResult> ThroughputAsync(TransportUnderTest transport, int clients, int messages, int payload, FrameCounter counter)
    {
        var (clientSystem, echoSystem) = Start(transport);
        try
        {
            var done = Enumerable.Range(0, clients).Select(_ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).ToArray();
            var pingers = await Deploy(clientSystem, echoSystem, clients, i => (messages, InFlight, done[i], null), payload);
            var before = counter.Take();
            var started = Stopwatch.GetTimestamp();
            foreach (var pinger in pingers)
            {
                pinger.Tell(PingClient.Begin);
            }

            await WhenAllBack(done, $"{transport.Name} at {clients} clients");
            var elapsed = Stopwatch.GetElapsedTime(started);
            var counted = counter.Take().Since(before);

            var total = 2L * clients * messages;
            return new RowResult(
                transport.Name,
                clients,
                total,
                total / elapsed.TotalSeconds,
                elapsed.TotalMilliseconds,
                transport.IsFlushBatching ? counted.Frames : null,
                transport.IsFlushBatching ? counted.Sends : null,
                transport.IsFlushBatching && counted.Sends > 0 ? (double)counted.Frames / counted.Sends : null,
                transport.IsFlushBatching ? counted.Flushes.Where(f => f.Value > 0).ToDictionary() : null,
                transport.IsFlushBatching ? transport.Section : null);
        }
        finally
        {
            await Stop(clientSystem, echoSystem);
        }
    }

    /// <exception cref="TimeoutException">A message did not come back.</exception>
    public static async Task<LatencyResult> LatencyAsync(TransportUnderTest transport, int roundTrips, int payload)
    {
        var (clientSystem, echoSystem) = Start(transport);
        try
        {
            var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            var ticks = new long[roundTrips];
            var pingers = await Deploy(clientSystem, echoSystem, 1, _ => (roundTrips, 1, done, ticks), payload);
            pingers[0].Tell(PingClient.Begin);
            await WhenAllBack([done], $"{transport.Name} latency");

            Array.Sort(ticks);
            return new LatencyResult(transport.Name, roundTrips, Micros(ticks, 0.50), Micros(ticks, 0.90), Micros(ticks, 0.99), Micros(ticks, 1.0));
        }
        finally
        {
            await Stop(clientSystem, echoSystem);
        }
    }

    private static async Task Stop(ActorSystem clientSystem, ActorSystem echoSystem)
    {
        // One after the other: the client side leaves first, so neither side reports the other vanishing mid-write.
        await clientSystem.Terminate();
        await echoSystem.Terminate();
    }

    private static (ActorSystem Clients, ActorSystem Echoes) Start(TransportUnderTest transport)
    {
        var config = ConfigurationFactory.ParseString($$"""
            akka {
              # Every message is checked by the benchmark itself; Akka would only log the disassociations of shutdown.
              loglevel = OFF
              stdout-loglevel = OFF
              actor.provider = remote
              remote.dot-netty.tcp {
                hostname = 127.0.0.1
                port = 0
                transport-class = "{{transport.TransportClass}}"
                {{transport.Section}}
              }
            }
            """);
        return (ActorSystem.Create("pingpong-clients", config), ActorSystem.Create("pingpong-echoes", config));
    }

    private static async Task<IActorRef[]> Deploy(
        ActorSystem clientSystem,
        ActorSystem echoSystem,
        int clients,
        Func<int, (int Messages, int InFlight, TaskCompletionSource Done, long[]? Ticks)> client,
        int payload)
    {
        var echoAddress = ((ExtendedActorSystem)echoSystem).Provider.DefaultAddress;
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
