using FlushBatching.Framing;
using FlushBatching.Tcp;
using Google.Protobuf;

namespace FlushBatching.Akka.Tests;

/// <summary>The stack suite on DotNetty, and what only this stack's event loops can get wrong.</summary>
public sealed class DotNettyConnectionStackTests : ConnectionStackSuite
{
    [Fact]
    public async Task Writes_the_event_loop_has_not_taken_yet_count_toward_the_high_water_mark()
    {
        const int high = 64 * 1024;
        var settings = ConnectionSettings.Default.WithWriteBufferWaterMarks(high, high / 2);
        var (client, server) = await Connect(settings, settings);
        var payload = ByteString.CopyFrom(new byte[1000]);

        // The client's event loop is held busy, so nothing written reaches its channel until it is released.
        // It is released however the test ends, so a failure cannot leave the loop held for the teardown.
        var release = new TaskCompletionSource();
        var held = new TaskCompletionSource();
        ((DotNettyConnection)client).EventLoop.Execute(() =>
        {
            held.SetResult();
            release.Task.Wait();
        });
        await held.Task.WaitAsync(Timeout);

        var accepted = 0;
        try
        {
            while (client.TryWrite(payload))
            {
                Assert.True(++accepted < 10_000, "TryWrite never refused although the event loop took nothing");
            }
        }
        finally
        {
            release.SetResult();
        }

        Assert.InRange(accepted * (payload.Length + (long)FramingSettings.HeaderLength), high, high + payload.Length + FramingSettings.HeaderLength);

        // Nothing accepted is lost: once the loop runs again, every payload arrives.
        var received = new Receiver();
        server.StartReading(received);
        for (var i = 0; i < accepted; i++)
        {
            await received.Payloads.Reader.ReadAsync().AsTask().WaitAsync(Timeout);
        }

        Assert.True(client.TryWrite(payload));
    }

    private protected override IConnectionStack CreateStack(ConnectionSettings settings) => new DotNettyConnectionStack(settings, 1, 1);
}
