using System.Buffers.Binary;
using CsCheck;
using FlushBatching.Framing;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Loops;
using FlushBatching.Tests.Support;

namespace FlushBatching.Tests.Tcp;

/// <summary>
/// <see cref="FrameWriteQueue"/> against a model, a plain list of the payloads written: random sequences of writes
/// (0 bytes to past a chunk), takes, sends of part of what was taken, failed sends, close requests and aborts, driven as
/// <see cref="FrameSender"/> drives it, under random water-mark pairs and both byte orders. Every accepted frame is sent
/// once, in order, byte for byte (the pool poisons what comes back, so a chunk returned too early shows), or dropped by
/// an abort or a failed send; every pooled chunk goes back once; after every step the unsent bytes are the model's,
/// writes are refused above the high-water mark until sends bring the unsent bytes to the low one, and
/// <see cref="FrameWriteQueue.WhenWritableAsync"/> completes exactly then, or at the close. A failure prints CsCheck's
/// seed and the shrunk sequence; such a sequence becomes a test below.
/// </summary>
public sealed class FrameWriteQueueModelTests
{
    private enum Kind
    {
        Write,
        Take,
        Send,
        FailSend,
        RequestClose,
        Abort,
    }

    private sealed record Step(Kind Kind, int Size)
    {
        public override string ToString() => Kind is Kind.Write or Kind.Send ? $"{Kind}({Size})" : Kind.ToString();
    }

    private static readonly Gen<Step> Steps = Gen.Frequency(
        (12, Gen.Int[0, 400].Select(size => new Step(Kind.Write, size))),
        (2, Gen.Int[400, 40_000].Select(size => new Step(Kind.Write, size))),
        (6, Gen.Const(new Step(Kind.Take, 0))),
        (6, Gen.Int[1, 12].Select(count => new Step(Kind.Send, count))),
        (1, Gen.Const(new Step(Kind.FailSend, 0))),
        (1, Gen.Const(new Step(Kind.RequestClose, 0))),
        (1, Gen.Const(new Step(Kind.Abort, 0))));

    // High marks from one small frame to several chunks; the low one anywhere below it.
    private static readonly Gen<Marks> MarkPairs =
        from high in Gen.Int[1, 96 * 1024]
        from low in Gen.Int[0, high - 1]
        from order in Gen.Enum<ByteOrder>()
        select new Marks(high, low, order);

    private sealed record Marks(int High, int Low, ByteOrder Order);

    [Fact]
    public void Random_sequences_send_every_accepted_frame_once_in_order_and_return_every_chunk_once() =>
        Gen.Select(MarkPairs, Steps.Array[1, 300]).Sample(
            (marks, steps) => Run(marks, steps), iter: 2_000, print: t => $"{t.Item1}: {string.Join(", ", t.Item2)}");

    private static void Run(Marks marks, Step[] steps)
    {
        var pool = new LeakCheckingPool(poison: true);
        var queue = new FrameWriteQueue(ConnectionSettings.Default.WithBufferPool(pool)
            .WithWriteBufferWaterMarks(marks.High, marks.Low)
            .WithFraming(FramingSettings.Default.WithByteOrder(marks.Order)));
        var model = new Model(marks);
        Task? writable = null;
        var released = false;
        var signal = new SendSignal();
        var held = new List<ArraySegment<byte>>();
        var stopped = false;
        foreach (var step in steps)
        {
            switch (step.Kind)
            {
                case Kind.Write:
                    var payload = model.Payload(step.Size);
                    var accepted = queue.TryWrite(payload, out var wake);
                    Assert.Equal(model.Accepts, accepted);
                    Assert.Equal(accepted && model.Parked, wake);
                    if (accepted)
                    {
                        model.Accept(payload);
                    }

                    break;
                case Kind.Take:
                    var next = queue.Take(holding: held.Count > 0, signal, out var frames, out _);
                    Assert.Equal(model.Next(held.Count > 0), next);
                    if (next == FrameWriteQueue.Next.Send)
                    {
                        held.AddRange(frames);
                        model.Queued = 0;
                        frames.Clear();
                    }
                    else if (next == FrameWriteQueue.Next.Stop)
                    {
                        // The send loop ends, handing back what it holds; a request to close stops only once all is sent.
                        Assert.True(model.Aborted || (held.Count == 0 && model.Sent == model.Written.Count));
                        stopped = true;
                    }

                    break;
                case Kind.Send:
                    var sent = held.Take(Math.Min(step.Size, held.Count)).ToList();
                    foreach (var frame in sent)
                    {
                        Assert.Equal(model.Frame(model.Sent++), frame.ToArray());
                    }

                    held.RemoveRange(0, sent.Count);
                    var bytes = sent.Sum(frame => (long)frame.Count);
                    queue.OnSent(sent, bytes);
                    model.OnSent(bytes);
                    break;
                case Kind.RequestClose:
                    var first = queue.RequestClose(out var wakeToClose);
                    Assert.Equal(!model.CloseRequested && !model.Aborted, first);
                    Assert.Equal(first && model.Parked, wakeToClose);
                    model.RequestClose(first);
                    break;
                case Kind.FailSend:
                    // The socket failed: the send loop ends, handing back what it holds, as FrameSender's finally does.
                    queue.ReleaseAll(held);
                    held.Clear();
                    model.Abort();
                    stopped = released = true;
                    break;
                case Kind.Abort:
                    queue.Close();
                    model.Abort();
                    break;
            }

            Assert.Equal(model.Unsent, queue.UnsentBytes);
            Assert.Equal(model.Accepts, queue.IsWritable);

            // A waiter made while refusing completes when writes are taken again, or the queue closes; not before.
            if (writable is { IsCompleted: true } done)
            {
                Assert.True(model.Accepts || model.CloseRequested || model.Aborted || stopped, "WhenWritableAsync completed while writes were still refused");
                Assert.True(done.IsCompletedSuccessfully);
                writable = null;
            }
            else if (writable is not null)
            {
                Assert.False(model.Accepts && !model.CloseRequested && !model.Aborted, "writes are taken again, and WhenWritableAsync has not completed");
            }

            if (writable is null && !model.Accepts && !model.CloseRequested && !model.Aborted && !stopped)
            {
                writable = queue.WhenWritableAsync(CancellationToken.None);
                Assert.False(writable.IsCompleted, "WhenWritableAsync completed while writes were refused");
            }

            if (stopped)
            {
                break;
            }
        }

        // However the sequence ended, the send loop's end (once) hands back what it holds and the queue what it has left.
        if (!released)
        {
            queue.ReleaseAll(held);
        }

        pool.AssertAllReturned();
        Assert.False(queue.TryWrite([1], out _));
        Assert.True(writable is null or { IsCompletedSuccessfully: true }, "a WhenWritableAsync waiter outlived the queue's end");
    }

    // What the queue should hold and answer, kept the plainest way.
    private sealed class Model(Marks marks)
    {
        public List<byte[]> Written { get; } = [];

        public int Sent { get; set; }

        public int Queued { get; set; }

        public bool Parked { get; private set; }

        public bool CloseRequested { get; private set; }

        public bool Aborted { get; private set; }

        private long _unsent;
        private bool _writable = true;

        public bool Accepts => _writable && !CloseRequested && !Aborted;

        public long Unsent => _unsent;

        // Each payload's bytes say which write it was, so a frame sent out of order or overwritten shows.
        public byte[] Payload(int size)
        {
            var payload = new byte[size];
            for (var i = 0; i < size; i++)
            {
                payload[i] = (byte)(Written.Count * 31 + i);
            }

            return payload;
        }

        public byte[] Frame(int index)
        {
            var payload = Written[index];
            var frame = new byte[payload.Length + FramingSettings.HeaderLength];
            if (marks.Order == ByteOrder.LittleEndian)
            {
                BinaryPrimitives.WriteInt32LittleEndian(frame, payload.Length);
            }
            else
            {
                BinaryPrimitives.WriteInt32BigEndian(frame, payload.Length);
            }

            payload.CopyTo(frame, FramingSettings.HeaderLength);
            return frame;
        }

        public void Accept(byte[] payload)
        {
            Written.Add(payload);
            Queued++;
            Parked = false;
            _unsent += payload.Length + FramingSettings.HeaderLength;
            if (_unsent > marks.High)
            {
                _writable = false;
            }
        }

        public FrameWriteQueue.Next Next(bool holding)
        {
            if (Aborted)
            {
                return FrameWriteQueue.Next.Stop;
            }

            if (Queued > 0)
            {
                return FrameWriteQueue.Next.Send;
            }

            if (holding)
            {
                return FrameWriteQueue.Next.BurstEnd;
            }

            if (CloseRequested)
            {
                return FrameWriteQueue.Next.Stop;
            }

            Parked = true;
            return FrameWriteQueue.Next.Park;
        }

        public void OnSent(long bytes)
        {
            _unsent -= bytes;
            if (!_writable && !CloseRequested && !Aborted && _unsent <= marks.Low)
            {
                _writable = true;
            }
        }

        public void RequestClose(bool first)
        {
            if (first)
            {
                CloseRequested = true;
                Parked = false;
            }
        }

        public void Abort()
        {
            Aborted = true;
            Parked = false;
        }
    }
}
