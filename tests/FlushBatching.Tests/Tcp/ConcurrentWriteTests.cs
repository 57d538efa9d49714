using System.Buffers;
using System.Buffers.Binary;
using FlushBatching.Framing;
using FlushBatching.Tcp;
using FlushBatching.Tests.Support;
using Xunit.Abstractions;

namespace FlushBatching.Tests.Tcp;

public class ConcurrentWriteTests(ITestOutputHelper output)
{
    private const int Seed = 20261122;
    private const int Threads = 8;
    private const int FramesPerSide = 100_000;

    /// <summary>
    /// Thread <c>t</c>'s frame <c>n</c>: its size drawn log-uniformly from 0 to the largest payload (so small
    /// frames dominate, as in Akka traffic, and the largest still occur), then a header naming the thread and
    /// the sequence number where the frame has room, then bytes that follow from both. Only thread 0 sends
    /// empty frames, so every frame can be told apart.
    /// </summary>
    private static byte[] FrameOf(int side, int thread, int n, int maxPayload)
    {
        var random = new Random(HashCode.Combine(Seed, side, thread, n));
        var size = n % 997 == 0 ? maxPayload : (int)Math.Exp(random.NextDouble() * Math.Log(maxPayload + 1)) - 1;
        if (size == 0 && thread != 0)
        {
            size = 1;
        }

        var frame = new byte[size];
        random.NextBytes(frame);
        if (size >= 1)
        {
            frame[0] = (byte)thread;
        }

        if (size >= 5)
        {
            BinaryPrimitives.WriteInt32LittleEndian(frame.AsSpan(1), n);
        }

        return frame;
    }

    [Fact]
    public async Task Frames_written_from_eight_threads_on_each_side_arrive_once_in_order_and_intact()
    {
        output.WriteLine($"seed {Seed}, {Threads} threads per side, {FramesPerSide} frames per side");
        var maxPayload = FramingSettings.Default.MaximumPayloadSize;
        var pool = new LeakCheckingPool();
        var settings = ConnectionSettings.Default.WithBufferPool(pool);
        await using var loopback = Loopback.Listen(settings);
        var (client, server) = await loopback.ConnectAsync(settings);
        var checkers = new[] { new OrderChecker(1, maxPayload), new OrderChecker(0, maxPayload) };
        client.Start(checkers[0]);
        server.Start(checkers[1]);

        var writers = new[] { client, server }.SelectMany((connection, side) => Enumerable.Range(0, Threads).Select(thread => Task.Run(async () =>
        {
            for (var n = thread; n < FramesPerSide; n += Threads)
            {
                var frame = FrameOf(side, thread, n / Threads, maxPayload);
                while (!connection.TryWrite(frame))
                {
                    if (connection.Completion.IsCompleted)
                    {
                        return;
                    }

                    await connection.WhenWritableAsync();
                }
            }
        }))).ToArray();

        await Poll.Within(Task.WhenAll(checkers.Select(c => c.Done)), patience: TimeSpan.FromMinutes(3));
        foreach (var checker in checkers)
        {
            Assert.Null(checker.Error);
            Assert.Equal(FramesPerSide, checker.Received);
        }

        await Poll.Within(Task.WhenAll(writers));

        await client.CloseAsync();
        await Poll.Within(server.Completion);
        pool.AssertAllReturned();
    }

    /// <summary>Checks each frame against the next one expected from the thread it names.</summary>
    private sealed class OrderChecker(int senderSide, int maxPayload) : IFrameHandler
    {
        private readonly int[] _next = new int[Threads];
        private readonly TaskCompletionSource _done = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public int Received { get; private set; }

        public string? Error { get; private set; }

        public Task Done => _done.Task;

        public void OnFrame(FramedConnection connection, ReadOnlySequence<byte> payload)
        {
            var bytes = payload.ToArray();
            var thread = bytes.Length == 0 ? 0 : bytes[0];
            if (thread >= Threads)
            {
                Fail($"frame {Received} names thread {thread}");
                return;
            }

            var expected = FrameOf(senderSide, thread, _next[thread], maxPayload);
            if (!expected.AsSpan().SequenceEqual(bytes))
            {
                Fail($"frame {Received} from thread {thread} is not its frame {_next[thread]} ({bytes.Length} bytes, expected {expected.Length})");
                return;
            }

            _next[thread]++;
            if (++Received == FramesPerSide)
            {
                _done.TrySetResult();
            }
        }

        public void OnClosed(FramedConnection connection, Exception? reason)
        {
            if (Received != FramesPerSide)
            {
                Fail($"closed after {Received} frames: {reason}");
            }
        }

        private void Fail(string error)
        {
            Error ??= error;
            _done.TrySetResult();
        }
    }
}
