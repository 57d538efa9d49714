using FlushBatching.Diagnostics;
using System.Buffers.Binary;
using CsCheck;
using FlushBatching.Framing;

namespace FlushBatching.DotNetty.Tests;

/// <summary>
/// The DotNetty stack's write queue against a model. One thread: random writes (0 bytes to past a chunk) under random
/// room, hand-offs and clears, each answer as the model says (refused while the bytes queued are above the room; a hand-off
/// asked for by the first write after a hand-off ran). Several threads: writers racing a hand-off loop that runs whenever one of
/// them is told a hand-off is needed, as the event loop does: every payload handed on once, in its writer's order, the
/// same instance, and none left queued when the writers stop (no hand-off request lost).
/// </summary>
public sealed class PayloadQueueModelTests
{
    private enum Kind
    {
        Write,
        HandOff,
        Clear,
    }

    // A hand-off's InHandOff sizes are written from inside it, one after each payload it hands on, as the channel's own
    // writes do while the event loop hands off.
    private sealed record Step(Kind Kind, int Size, long Room, int[] InHandOff)
    {
        public override string ToString() => Kind switch
        {
            Kind.Write => $"Write({Size}, room {Room})",
            Kind.HandOff => $"HandOff(writing {InHandOff.Length} during it)",
            _ => Kind.ToString(),
        };
    }

    private static readonly Gen<int> Sizes = Gen.Frequency((8, Gen.Int[0, 400]), (1, Gen.Int[400, 40_000]));

    private static readonly Gen<Step> Steps = Gen.Frequency(
        (10, Gen.Select(Sizes, Gen.Long[-1, 100_000], (size, room) => new Step(Kind.Write, size, room, []))),
        (3, Sizes.Array[0, 3].Select(inHandOff => new Step(Kind.HandOff, 0, 0, inHandOff))),
        (1, Gen.Const(new Step(Kind.Clear, 0, 0, []))));

    [Fact]
    public void One_thread_random_sequences_answer_as_the_model_and_hand_on_every_payload_in_order() =>
        Steps.Array[1, 300].Sample(Run, iter: 2_000, print: steps => string.Join(", ", steps));

    [Fact]
    public void Concurrent_writers_racing_hand_offs_have_every_payload_handed_on_once_in_order() =>
        Gen.Select(Gen.Int[0, 300].Array[0, 200].Array[1, 4], Gen.OneOf(Gen.Const(long.MaxValue), Gen.Long[0, 4096])).Sample(
            (writers, room) => RunConcurrently(writers, room), iter: 300, threads: 1,
            print: t => $"writers of {string.Join(", ", t.Item1.Select(sizes => sizes.Length))} payloads, room {t.Item2}");

    private static void Run(Step[] steps)
    {
        var queue = new PayloadQueue(TimeProvider.System, FlushBatchingMetrics.Shared);
        var queued = new Queue<ReadOnlyMemory<byte>>();
        long queuedBytes = 0;
        var handOffPending = false;
        foreach (var step in steps)
        {
            switch (step.Kind)
            {
                case Kind.Write:
                    var payload = (ReadOnlyMemory<byte>)new byte[step.Size];
                    var outcome = queue.TryEnqueue(payload, step.Room);
                    if (queuedBytes > step.Room)
                    {
                        Assert.Equal(PayloadQueue.Outcome.Refused, outcome);
                        break;
                    }

                    Assert.Equal(handOffPending ? PayloadQueue.Outcome.Queued : PayloadQueue.Outcome.QueuedHandOffNeeded, outcome);
                    handOffPending = true;
                    queued.Enqueue(payload);
                    queuedBytes += step.Size + FramingSettings.HeaderLength;
                    break;
                case Kind.HandOff:
                    // The hand-off clears its request before it takes anything: the first write made during it asks for
                    // a hand-off of its own (and is taken by this one too), so no write waits on a hand-off already ending.
                    handOffPending = false;
                    var written = 0;
                    queue.HandOff(queued, (expected, payload) =>
                    {
                        Assert.Equal(expected.Dequeue(), payload); // the same array: ReadOnlyMemory compares its array, offset and length
                        if (written < step.InHandOff.Length)
                        {
                            var during = (ReadOnlyMemory<byte>)new byte[step.InHandOff[written++]];
                            Assert.Equal(
                                handOffPending ? PayloadQueue.Outcome.Queued : PayloadQueue.Outcome.QueuedHandOffNeeded,
                                queue.TryEnqueue(during, long.MaxValue));
                            handOffPending = true;
                            expected.Enqueue(during);
                        }
                    });
                    Assert.Empty(queued);
                    queuedBytes = 0;
                    break;
                case Kind.Clear:
                    // What a closing channel does with what it never wrote: dropped, counted out; a hand-off still asked for
                    // finds nothing.
                    queue.Clear();
                    queued.Clear();
                    queuedBytes = 0;
                    break;
            }

            Assert.Equal(queuedBytes, queue.QueuedBytes);
        }
    }

    // With a finite room, refusals race the hand-offs: a refused writer tries again until taken, as Akka.Remote retries, and
    // the bytes held never pass the room by more than what the writers racing the check can add at once.
    private static void RunConcurrently(int[][] writers, long room)
    {
        var overshoot = writers.Length * (8 + 300 + 4L);
        long mostHeld = 0;
        var queue = new PayloadQueue(TimeProvider.System, FlushBatchingMetrics.Shared);
        var next = new int[writers.Length];
        var handed = 0;
        using var handOffs = new SemaphoreSlim(0);
        var stop = false;

        // The event loop: one hand-off per request, never two at once. A thread of its own, as a loop has: on the thread
        // pool, writers spinning on refusals held every pool thread, and each round waited for the pool to add one (a
        // minute for the 300 rounds, once).
        var loop = Task.Factory.StartNew(() =>
        {
            while (true)
            {
                handOffs.Wait();
                if (Volatile.Read(ref stop))
                {
                    return;
                }

                queue.HandOff(next, (expected, payload) =>
                {
                    var writer = BinaryPrimitives.ReadInt32LittleEndian(payload.Span);
                    var seq = BinaryPrimitives.ReadInt32LittleEndian(payload.Span[4..]);
                    Assert.Equal(expected[writer]++, seq);
                    Assert.Equal(8 + writers[writer][seq], payload.Length);
                    Interlocked.Increment(ref handed);
                });
            }
        }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);

        Task.WaitAll(writers.Select((sizes, writer) => Task.Run(() =>
        {
            for (var seq = 0; seq < sizes.Length; seq++)
            {
                var bytes = new byte[8 + sizes[seq]];
                BinaryPrimitives.WriteInt32LittleEndian(bytes, writer);
                BinaryPrimitives.WriteInt32LittleEndian(bytes.AsSpan(4), seq);
                var payload = (ReadOnlyMemory<byte>)bytes.ToArray();
                PayloadQueue.Outcome outcome;
                while ((outcome = queue.TryEnqueue(payload, room)) == PayloadQueue.Outcome.Refused)
                {
                    Thread.Yield();
                }

                var held = queue.QueuedBytes;
                long seen;
                while (held > (seen = Volatile.Read(ref mostHeld)) && Interlocked.CompareExchange(ref mostHeld, held, seen) != seen)
                {
                }

                if (outcome == PayloadQueue.Outcome.QueuedHandOffNeeded)
                {
                    handOffs.Release();
                }
            }
        })).ToArray());

        // Every payload a writer queued reaches the loop through a hand-off some writer asked for.
        var total = writers.Sum(sizes => sizes.Length);
        SpinWait.SpinUntil(() => Volatile.Read(ref handed) == total || loop.IsCompleted, TimeSpan.FromSeconds(30));
        if (loop.IsFaulted)
        {
            loop.GetAwaiter().GetResult(); // what the hand-off found wrong
        }

        Assert.True(Volatile.Read(ref handed) == total, $"{Volatile.Read(ref handed)} of {total} payloads handed on: a hand-off request was lost");
        Volatile.Write(ref stop, true);
        handOffs.Release();
        loop.Wait(TimeSpan.FromSeconds(30));
        Assert.Equal(writers.Select(sizes => sizes.Length), next);
        Assert.Equal(0, queue.QueuedBytes);
        if (room != long.MaxValue)
        {
            Assert.True(mostHeld <= room + overshoot + PayloadQueue.UncountEvery, $"{mostHeld} bytes held with room for {room}");
        }
    }
}
