using System.Buffers.Binary;
using CsCheck;
using FlushBatching.Framing;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Io;
using FlushBatching.Tcp.Loops;
using FlushBatching.Tests.Support;

namespace FlushBatching.Tests.Tcp;

/// <summary>
/// The whole send side, <see cref="FrameWriteQueue"/> and <see cref="FrameSender"/> with its flush policy, written to
/// from several threads at once and sending into a recording <see cref="ConnectionIo"/> that copies out what each send
/// carries: against each writer's own list, every frame arrives once, in that writer's order, byte for byte, or (after
/// an abort from yet another thread) a prefix of it does; every pooled chunk goes back once.
/// </summary>
public sealed class SendPathModelTests
{
    private static readonly Gen<int> Sizes = Gen.Frequency((8, Gen.Int[8, 300]), (1, Gen.Int[300, 40_000]));

    private static readonly Gen<(int[][] Writers, int AbortAfter)> Runs = Gen.Select(
        Sizes.Array[0, 150].Array[1, 4],
        Gen.Frequency((3, Gen.Const(-1)), (1, Gen.Int[0, 200])));

    [Fact]
    public void Concurrent_writers_each_see_their_frames_sent_once_in_order_and_every_chunk_returned() =>
        Runs.Sample(run => RunAsync(run.Writers, run.AbortAfter).GetAwaiter().GetResult(), iter: 200, threads: 1,
            print: run => $"writers [{string.Join(" | ", run.Writers.Select(w => string.Join(",", w)))}], abort after {run.AbortAfter} frames");

    private static async Task RunAsync(int[][] writers, int abortAfter)
    {
        var pool = new LeakCheckingPool();
        var settings = ConnectionSettings.Default.WithBufferPool(pool).WithWriteBufferWaterMarks(high: 64 * 1024, low: 16 * 1024);
        var io = new RecordingIo();
        var queue = new FrameWriteQueue(settings);
        var sender = new FrameSender(io, queue, settings);
        var sending = Task.Run(sender.SendToPeerAsync);
        var aborted = false;
        var writing = writers.Select((sizes, writer) => Task.Run(async () =>
        {
            for (var seq = 0; seq < sizes.Length; seq++)
            {
                var payload = Payload(writer, seq, sizes[seq]);
                bool wake;
                while (!queue.TryWrite(payload, out wake))
                {
                    if (queue.IsCloseRequested || Volatile.Read(ref aborted))
                    {
                        return;
                    }

                    await queue.WhenWritableAsync(CancellationToken.None);
                }

                if (wake)
                {
                    sender.Wake();
                }
            }
        })).ToArray();

        var aborting = Task.Run(async () =>
        {
            if (abortAfter < 0)
            {
                return;
            }

            while (io.Frames < abortAfter && !Task.WhenAll(writing).IsCompleted)
            {
                await Task.Yield();
            }

            Volatile.Write(ref aborted, true);
            queue.Close();
            sender.WakeToStop();
        });

        await Poll.Within(Task.WhenAll(writing));
        await Poll.Within(aborting);
        if (queue.RequestClose(out var wakeToClose) && wakeToClose)
        {
            sender.Wake();
        }

        await Poll.Within(sending);
        pool.AssertAllReturned();

        var next = new int[writers.Length];
        foreach (var frame in Frames(io.Sent))
        {
            var writer = BinaryPrimitives.ReadInt32LittleEndian(frame);
            var seq = BinaryPrimitives.ReadInt32LittleEndian(frame.AsSpan(4));
            Assert.Equal(next[writer]++, seq);
            Assert.Equal(Payload(writer, seq, writers[writer][seq]), frame);
        }

        if (!aborted)
        {
            Assert.Equal(writers.Select(w => w.Length), next);
        }
    }

    // Tagged with its writer and place, then bytes that follow from them: a frame out of order or overwritten shows.
    private static byte[] Payload(int writer, int seq, int size)
    {
        var payload = new byte[size];
        BinaryPrimitives.WriteInt32LittleEndian(payload, writer);
        BinaryPrimitives.WriteInt32LittleEndian(payload.AsSpan(4), seq);
        for (var i = 8; i < size; i++)
        {
            payload[i] = (byte)(writer * 7 + seq * 31 + i);
        }

        return payload;
    }

    private static IEnumerable<byte[]> Frames(byte[] stream)
    {
        for (var at = 0; at < stream.Length;)
        {
            var length = BinaryPrimitives.ReadInt32LittleEndian(stream.AsSpan(at));
            yield return stream.AsSpan(at + FramingSettings.HeaderLength, length).ToArray();
            at += FramingSettings.HeaderLength + length;
        }
    }
}
