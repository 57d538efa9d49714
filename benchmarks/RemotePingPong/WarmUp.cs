using System.Diagnostics;
using System.Runtime;
using FlushBatching.Benchmarks.Shared;

namespace RemotePingPong;

/// <summary>
/// Runs warm-up rounds until the JIT has settled: two rounds in a row that spent under 2% of their time compiling.
/// </summary>
/// <remarks>
/// Tiered compilation with dynamic PGO keeps recompiling hot methods for tens of seconds of load on 2 cores (measured:
/// 6,000 methods in the first round, then hundreds a round, with bursts of up to 2,900 as instrumented code is
/// promoted, about 11 s of JIT in the first 26 s; these rounds end after 40–90 s here). A fixed single round left most
/// of that inside the measured rows, where it took a quarter to half of a core from whichever transport ran first.
/// <see cref="Limit"/> (<c>--warm-up-limit</c>) keeps a machine where the JIT never settles from warming up forever;
/// the line printed says which it was.
/// </remarks>
internal static class WarmUp
{
    private const double QuietShare = 0.02;

    /// <summary>Warm-up time at most; zero runs one round.</summary>
    // Clients per warm-up round: enough to fill the batches a measured row will see.
    private const int Clients = 5;

    public static TimeSpan Limit { get; set; } = TimeSpan.FromSeconds(90);

    public static async Task UntilJitQuietAsync(Func<Task> round)
    {
        var clock = Stopwatch.StartNew();
        var quietRounds = 0;
        var rounds = 0;
        var share = 1.0;
        do
        {
            var jitBefore = JitInfo.GetCompilationTime();
            var started = clock.Elapsed;
            await round();
            rounds++;
            share = (JitInfo.GetCompilationTime() - jitBefore) / (clock.Elapsed - started);
            quietRounds = share < QuietShare ? quietRounds + 1 : 0;
        }
        while (quietRounds < 2 && clock.Elapsed < Limit);

        Console.WriteLine(quietRounds == 2
            ? $"warm-up: {Rounds(rounds)}, {clock.Elapsed.TotalSeconds:F0} s, until the JIT took under {QuietShare:P0} of two rounds in a row"
            : $"warm-up: stopped at {clock.Elapsed.TotalSeconds:F0} s ({Rounds(rounds)}, --warm-up-limit {Limit.TotalSeconds:F0}) with the JIT still at {share:P0} of the last round");
    }

    private static string Rounds(int rounds) => rounds == 1 ? "1 round" : $"{rounds} rounds";

    /// <summary>
    /// Rounds of pings on every transport, not counted, until the JIT is quiet: tiered compilation, the thread pool and
    /// buffer pools settle before anything is measured, or the first rows run while the JIT is still at work.
    /// </summary>
    public static async Task EveryTransportAsync(EchoHost echoes, TransportUnderTest[] transports, int messages, int payload, FrameCounter counter)
    {
        var warmUpMessages = Math.Min(messages, 10_000);
        Console.WriteLine($"warm-up: rounds of {Clients} clients x {warmUpMessages} messages on every transport, not counted");
        await UntilJitQuietAsync(async () =>
        {
            foreach (var transport in transports)
            {
                await PingPongRun.ThroughputAsync(echoes, transport, Clients, warmUpMessages, payload, counter);
            }
        });
    }
}
