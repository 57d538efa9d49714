using System.Buffers.Binary;
using System.Diagnostics;
using System.Net;
using FlushBatching.Tcp;
using Google.Protobuf;
using FlushBatching.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// Writes racing a close: the write path and the start of a close are linearizable, so every write the connection
/// accepted reaches a peer that reads, in order, and none is dropped in silence. Rounds run for a fixed time, not a
/// fixed count, so a loaded machine runs fewer of them rather than running long.
/// </summary>
public abstract partial class ConnectionStackSuite
{
    private static readonly TimeSpan RaceTime = TimeSpan.FromSeconds(3);

    [Fact]
    public async Task Every_write_accepted_while_a_close_races_it_reaches_the_reading_peer_in_order()
    {
        const int seed = 59;
        output.WriteLine($"seed {seed}");
        var random = new Random(seed);
        var endpoint = await Listen(ConnectionSettings.Default);
        var clients = Stack(ConnectionSettings.Default);
        var rounds = 0;
        var watch = Stopwatch.StartNew();
        while (watch.Elapsed < RaceTime)
        {
            var client = await Poll.Within(clients.ConnectAsync(endpoint, ConnectionSettings.Default));
            var server = await Poll.Within(_inbound.Reader.ReadAsync().AsTask());
            var received = new Receiver();
            server.StartReading(received);

            // One writer, as Akka's endpoint writer is, writing numbered payloads as fast as it can, yielding on a
            // refusal as Akka's backoff would; the close comes after a random spin, while it writes.
            var closing = 0;
            var writer = new Thread(() =>
            {
                var accepted = 0;
                var payload = new byte[4];
                while (true)
                {
                    BinaryPrimitives.WriteInt32LittleEndian(payload, accepted);
                    if (client.TryWrite(ByteString.CopyFrom(payload)))
                    {
                        accepted++;
                    }
                    else if (Volatile.Read(ref closing) == 1)
                    {
                        break;
                    }
                    else
                    {
                        Thread.Yield();
                    }
                }

                Volatile.Write(ref closing, accepted + 2);
            });
            writer.Start();
            Thread.SpinWait(random.Next(0, 20_000));
            Volatile.Write(ref closing, 1);
            var close = client.CloseAsync();
            writer.Join();
            var acceptedWrites = Volatile.Read(ref closing) - 2;
            await Poll.Within(close);
            await Poll.Within(received.Closed.Task);
            await Poll.Within(server.CloseAsync());

            var numbers = new List<int>();
            while (received.Payloads.Reader.TryRead(out var payload))
            {
                numbers.Add(BinaryPrimitives.ReadInt32LittleEndian(payload.Span));
            }

            Assert.True(acceptedWrites == numbers.Count, $"round {rounds}: {acceptedWrites} writes accepted, {numbers.Count} arrived");
            Assert.Equal(Enumerable.Range(0, acceptedWrites), numbers);
            rounds++;
        }

        output.WriteLine($"{rounds} rounds in {RaceTime.TotalSeconds:F0} s");
    }
}
