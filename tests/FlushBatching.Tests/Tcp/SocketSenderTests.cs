using FlushBatching.Tcp;
using FlushBatching.Tcp.Io;
using FlushBatching.Tcp.Loops;
using FlushBatching.Tests.Support;

namespace FlushBatching.Tests.Tcp;

/// <summary>
/// The sockets stack's one reusable send on loopback, between a send of one buffer and a gathered send of several: the
/// send loop holds a single <see cref="SocketSender"/>, which must let go of one form before it takes the other.
/// </summary>
public sealed class SocketSenderTests
{
    [Fact]
    public async Task Sends_of_one_buffer_and_gathered_sends_of_several_follow_each_other_and_every_frame_arrives_intact()
    {
        var scheduler = new ManualScheduler();
        await using var loopback = Loopback.Listen();
        var (client, server) = await loopback.ConnectAsync(ConnectionSettings.Default.WithSendScheduler(scheduler));
        var received = new FrameCollector();
        server.Start(received);

        // Each burst is one send: small frames side by side in a chunk are one buffer; a frame larger than a chunk has
        // a buffer of its own, so a burst with one in the middle is gathered from three.
        byte[][][] bursts =
        [
            [Payload(1, 10)],
            [Payload(2, 10), Payload(3, FrameChunks.ChunkSize + 1), Payload(4, 10)],
            [Payload(5, 10)],
            [Payload(6, FrameChunks.ChunkSize + 1), Payload(7, 10)],
            [Payload(8, 10), Payload(9, 10)],
        ];
        var sent = new List<byte[]>();
        foreach (var burst in bursts)
        {
            foreach (var payload in burst)
            {
                Assert.True(client.TryWrite(payload));
                sent.Add(payload);
            }

            // A send the socket refuses ends the connection: fail with its reason, not after waiting out the frames.
            scheduler.RunAll();
            var arrived = received.WaitForCountAsync(sent.Count);
            if (await Task.WhenAny(arrived, client.Completion) != arrived)
            {
                Assert.Fail($"The connection ended after {received.Frames.Count} of {sent.Count} frames: {client.CloseReason}");
            }

            await arrived;
        }

        Assert.Equal(sent, received.Frames);
    }

    private static byte[] Payload(int seed, int size) => Enumerable.Range(seed, size).Select(b => (byte)(b * 31)).ToArray();
}
