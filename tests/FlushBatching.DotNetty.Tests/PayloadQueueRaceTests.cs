using System.Diagnostics;
using FlushBatching.Diagnostics;
using Xunit.Abstractions;

namespace FlushBatching.DotNetty.Tests;

/// <summary>
/// The race between a hand-off clearing its flag and a writer queueing: in every round a write lands while a hand-off on
/// another core starts, and no later write comes to push a payload the hand-off missed. A hand-off whose flag clear could be
/// reordered after its first look at the queue (a store then a load, with no full fence) strands that payload. Rounds
/// run for a fixed time, not a fixed count: a loaded machine runs fewer of them rather than running past CI's bounds.
/// </summary>
public sealed class PayloadQueueRaceTests(ITestOutputHelper output)
{
    // With the flag cleared by a volatile store, 22-34 rounds in 5 million stranded a payload here (3 runs, 2 cores);
    // with Interlocked.Exchange, none in 15 million. About a million rounds a second on a quiet 2-core machine.
    private static readonly TimeSpan RaceTime = TimeSpan.FromSeconds(5);

    [Fact]
    public void A_write_racing_a_hand_off_is_handed_off_by_it_or_asks_for_another_in_every_round()
    {
        var payload = (ReadOnlyMemory<byte>)"x"u8.ToArray();
        PayloadQueue queue = null!;
        var go = 0;
        var writerOutcome = PayloadQueue.Outcome.Refused;
        var writerDone = new ManualResetEventSlim();
        var stranded = new List<int>();

        // The writer waits on its own core until the round starts (spinning, then yielding its core to whoever needs it,
        // never sleeping), then writes once, as a writer that saw nothing. A round of -1 ends it.
        var writer = new Thread(() =>
        {
            var seen = 0;
            while (true)
            {
                var spin = new SpinWait();
                int round;
                while ((round = Volatile.Read(ref go)) == seen)
                {
                    spin.SpinOnce(sleep1Threshold: -1);
                }

                if (round < 0)
                {
                    return;
                }

                seen = round;
                writerOutcome = queue.TryEnqueue(payload, long.MaxValue);
                writerDone.Set();
            }
        }) { IsBackground = true };
        writer.Start();

        var watch = Stopwatch.StartNew();
        var rounds = 0;
        for (var round = 1; watch.Elapsed < RaceTime; round++)
        {
            rounds = round;
            // A hand-off is due with nothing left to take: the write that asked for it was taken by the hand-off before
            // (made while that one ran). So the coming hand-off finds the queue empty at its first look, the one
            // look that no interlocked dequeue fences.
            queue = new PayloadQueue(TimeProvider.System, FlushBatchingMetrics.Shared);
            queue.TryEnqueue(payload, long.MaxValue);
            var first = true;
            queue.HandOff(0, (_, _) =>
            {
                if (first)
                {
                    first = false;
                    queue.TryEnqueue(payload, long.MaxValue);
                }
            });
            writerDone.Reset();
            var handedOff = 0;
            Volatile.Write(ref go, round);
            queue.HandOff(0, (_, _) => handedOff++);
            writerDone.Wait();

            // What the writer was told decides whether a hand-off follows; nothing else will come.
            if (writerOutcome == PayloadQueue.Outcome.QueuedHandOffNeeded)
            {
                queue.HandOff(0, (_, _) => handedOff++);
            }

            if (handedOff != 1)
            {
                stranded.Add(round);
            }
        }

        Volatile.Write(ref go, -1);
        writer.Join();
        output.WriteLine($"{rounds:N0} rounds in {RaceTime.TotalSeconds:F0} s");
        Assert.True(stranded.Count == 0, $"{stranded.Count} of {rounds} rounds left a payload queued with no hand-off to come (first: round {stranded.FirstOrDefault()})");
    }
}
