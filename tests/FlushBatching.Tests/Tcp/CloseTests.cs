using FlushBatching.Tcp;
using FlushBatching.Tests.Support;

namespace FlushBatching.Tests.Tcp;

public class CloseTests
{
    private readonly ManualScheduler _scheduler = new();
    private readonly LeakCheckingPool _pool = new();

    [Fact]
    public async Task Close_sends_everything_pending_then_closes_and_returns_every_buffer()
    {
        await using var loopback = Loopback.Listen();
        var (client, server) = await loopback.ConnectAsync(ConnectionSettings.Default.WithSendScheduler(_scheduler).WithBufferPool(_pool));
        var received = new FrameCollector();
        server.Start(received);
        for (var i = 0; i < 1000; i++)
        {
            Assert.True(client.TryWrite(BitConverter.GetBytes(i)));
        }

        Assert.Equal(1000 * 8, client.UnsentBytes);
        var closing = client.CloseAsync();
        var rentedBeforeRefusal = _pool.Rented;
        Assert.False(client.TryWrite([1]));
        Assert.Equal(rentedBeforeRefusal, _pool.Rented);
        _scheduler.RunAll();

        await Poll.Within(closing);
        Assert.Null(await received.WaitClosedAsync());
        Assert.Equal(Enumerable.Range(0, 1000).Select(BitConverter.GetBytes), received.Frames);
        Assert.Equal(1, received.ClosedCalls);
        Assert.Null(client.CloseReason);
        _pool.AssertAllReturned();
    }

    [Fact]
    public async Task Abort_drops_what_is_pending_returns_every_buffer_and_the_peer_hears_of_it_once()
    {
        await using var loopback = Loopback.Listen();
        var (client, server) = await loopback.ConnectAsync(ConnectionSettings.Default.WithSendScheduler(_scheduler).WithBufferPool(_pool));
        var received = new FrameCollector();
        server.Start(received);
        for (var i = 0; i < 100; i++)
        {
            client.TryWrite(new byte[100]);
        }

        client.Abort();
        await Poll.Within(client.Completion);

        // Completion comes once both loops have ended, so the send loop has given every buffer back by then.
        _pool.AssertAllReturned();
        await received.WaitClosedAsync();
        await Poll.Within(server.Completion);

        Assert.Empty(received.Frames);
        Assert.Equal(1, received.ClosedCalls);
        Assert.False(client.TryWrite([1]));
        _pool.AssertAllReturned();
    }

    [Fact]
    public async Task Frames_that_arrive_before_the_handler_is_registered_are_held_and_delivered_in_order()
    {
        await using var loopback = Loopback.Listen();
        var (client, server) = await loopback.ConnectAsync();
        for (var i = 0; i < 50; i++)
        {
            client.TryWrite(BitConverter.GetBytes(i));
        }

        await Poll.Within(client.CloseAsync());
        var received = new FrameCollector();
        server.Start(received);

        Assert.Null(await received.WaitClosedAsync());
        Assert.Equal(Enumerable.Range(0, 50).Select(BitConverter.GetBytes), received.Frames);
        Assert.Throws<InvalidOperationException>(() => server.Start(new FrameCollector()));
    }

    [Fact]
    public async Task A_handler_that_throws_closes_its_connection_with_that_exception()
    {
        await using var loopback = Loopback.Listen();
        var (client, server) = await loopback.ConnectAsync();
        var received = new FrameCollector { OnEach = (_, _) => throw new InvalidOperationException("handler failed") };
        server.Start(received);
        var atClient = new FrameCollector();
        client.Start(atClient);
        client.TryWrite([1]);

        var reason = await received.WaitClosedAsync();
        Assert.Equal("handler failed", Assert.IsType<InvalidOperationException>(reason).Message);
        await atClient.WaitClosedAsync();
        await Poll.Within(client.Completion);
    }
}
