using System.Diagnostics;
using Akka.Actor;
using FlushBatching.Benchmarks.Shared;
using HdrHistogram;

namespace RemotePingPong.OpenLoop;

/// <summary>
/// Offers round trips at a fixed rate whatever comes back (open loop, as wrk2 does): a sender thread sends each message
/// at its due time (waking to within tens of microseconds), spread over the clients in turn; each message's latency is
/// counted from its due time. A transport that cannot keep up shows growing latency, not a lower offered rate:
/// coordinated omission corrected.
/// </summary>
internal static class OpenLoopRun
{
    // After the last message was due, how long replies may take before the rate counts as not sustained.
    private static readonly TimeSpan Grace = TimeSpan.FromSeconds(10);

    /// <param name="counter">This process's FlushBatching Meters: the queue delay of the clients' sends.</param>
    public static async Task<OpenLoopResult> RunAsync(
        EchoHost echoes, TransportUnderTest transport, int run, int clients, int perSecond, TimeSpan duration, int payload, FrameCounter counter)
    {
        var echoAddress = await echoes.StartAsync(transport);
        var clientSystem = ActorSystem.Create("openloop-clients", PingPongRun.Config(transport, PingPongRun.ClientHostname, ""));
        try
        {
            var total = (long)(perSecond * duration.TotalSeconds);
            var perClient = Enumerable.Range(0, clients).Select(i => (int)(total / clients + (i < total % clients ? 1 : 0))).ToArray();
            var due = perClient.Select(n => new long[n]).ToArray();
            var done = perClient.Select(_ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).ToArray();
            var latencies = HistogramFactory.With64BitBucketSize().WithValuesFrom(1).WithValuesUpTo(3_600_000_000).WithPrecisionOf(3)
                .WithThreadSafeWrites().WithThreadSafeReads().Create();
            var echo = new IActorRef[clients];
            var receivers = new IActorRef[clients];
            for (var i = 0; i < clients; i++)
            {
                echo[i] = clientSystem.ActorOf(Props.Create<Echo>().WithDeploy(new Deploy(new RemoteScope(echoAddress))), $"echo-{i}");
                await echo[i].Ask<byte[]>(new byte[payload], TimeSpan.FromSeconds(30)); // the association is up before the schedule starts
                var (schedule, finished) = (due[i], done[i]);
                receivers[i] = clientSystem.ActorOf(Props.Create(() => new OpenLoopReceiver(schedule, latencies, finished)), $"receiver-{i}");
            }

            latencies.Reset();
            counter.Take(); // the queue delays of the set-up are not counted
            await echoes.BeginRowAsync();
            var started = Stopwatch.GetTimestamp();
            var sender = new Thread(() => Send(echo, receivers, due, payload, perSecond, started)) { IsBackground = true, Name = "open-loop sender" };
            sender.Start();
            var sustained = await Task.WhenAll(done.Select(d => d.Task)).WaitAsync(duration + Grace).ContinueWith(t => t.IsCompletedSuccessfully);
            var elapsed = Stopwatch.GetElapsedTime(started);
            sender.Join();
            await echoes.EndRowAsync();
            var queued = counter.Take();
            var histogram = latencies.GetIntervalHistogram();
            return new OpenLoopResult(
                transport.Name,
                run,
                perSecond,
                histogram.TotalCount / elapsed.TotalSeconds,
                histogram.TotalCount,
                histogram.GetValueAtPercentile(50),
                histogram.GetValueAtPercentile(99),
                histogram.GetValueAtPercentile(99.9),
                histogram.GetMaxValue(),
                sustained,
                transport.IsFlushBatching ? queued.QueueDelayP50Us : null,
                transport.IsFlushBatching ? queued.QueueDelayP99Us : null);
        }
        finally
        {
            await clientSystem.Terminate();
            await echoes.StopAsync();
        }
    }

    // Message k is due at started + k / perSecond and goes to client k mod clients. The sender sends every message
    // due, then sleeps until the next one is (to within tens of microseconds: PreciseSleep). A due time is written
    // before its message is sent, so the receiver reads it after the reply comes.
    private static void Send(IActorRef[] echo, IActorRef[] receivers, long[][] due, int payload, int perSecond, long started)
    {
        var message = new byte[payload];
        var sent = new int[echo.Length];
        var total = due.Sum(d => (long)d.Length);
        long DueAt(long k) => started + (long)(k * (double)Stopwatch.Frequency / perSecond);
        for (long k = 0; k < total;)
        {
            var now = Stopwatch.GetTimestamp();
            for (; k < total && DueAt(k) <= now; k++)
            {
                var client = (int)(k % echo.Length);
                Volatile.Write(ref due[client][sent[client]++], DueAt(k));
                echo[client].Tell(message, receivers[client]);
            }

            if (k < total)
            {
                PreciseSleep.Until(DueAt(k));
            }
        }
    }
}
