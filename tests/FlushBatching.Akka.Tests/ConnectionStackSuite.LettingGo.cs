using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using FlushBatching.Akka.Tests.Support;
using FlushBatching.Diagnostics;
using FlushBatching.Framing;
using FlushBatching.Tcp;
using FlushBatching.Tests.Support;
using Google.Protobuf;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// Letting go of a peer that has stopped reading (a long GC pause, a paused VM, a hung process): a close is graceful
/// only within <see cref="ConnectionSettings.CloseTimeout"/>, then the socket and what was queued on it are released.
/// </summary>
public abstract partial class ConnectionStackSuite
{
    private static readonly TimeSpan CloseBound = TimeSpan.FromSeconds(1);

    /// <summary>The settings with what a stack holds per connection made checkable by <see cref="AssertNothingHeld"/>.</summary>
    private protected abstract ConnectionSettings WithHoldingsChecked(ConnectionSettings settings);

    /// <summary>Fails unless every buffer the stack took for <paramref name="connection"/> is released.</summary>
    private protected abstract void AssertNothingHeld(ITransportConnection connection);

    [LinuxFact("reads the process's sockets from /proc/net/tcp")]
    public async Task A_close_to_a_peer_that_stopped_reading_ends_within_the_close_bound_and_lets_go_of_the_socket_and_buffers()
    {
        var settings = WithHoldingsChecked(ConnectionSettings.Default.WithCloseTimeout(CloseBound).WithSendBufferSize(64 * 1024));
        var (client, peer, port) = await ConnectToPeerThatNeverReads(settings);
        using var _ = peer;
        var receiver = new Receiver();
        client.StartReading(receiver);
        var queued = await FillUntilRefused(client);
        var local = client.LocalEndPoint.Port;
        Assert.True(ProcessSockets.Holds(local, port), $"no socket from :{local} to the peer's :{port}: {ProcessSockets.Describe(port)}");

        var watch = Stopwatch.StartNew();
        var closing = client.CloseAsync();
        Assert.True(await Task.WhenAny(closing, Task.Delay(CloseBound + Margin)) == closing,
            $"the close of a connection with {queued:N0} bytes queued to a peer that does not read took over {(CloseBound + Margin).TotalSeconds} s");

        // Graceful first: with the peer reading nothing, nothing but the bound could have ended it.
        Assert.True(watch.Elapsed >= CloseBound * 0.9, $"the close ended after {watch.Elapsed.TotalMilliseconds:N0} ms, before its bound");
        var reason = await Poll.Within(receiver.Closed.Task);
        Assert.IsType<TimeoutException>(reason);
        Assert.Contains("the peer did not read them", reason!.Message);
        Assert.Contains(SettingKeys.CloseTimeout, reason.Message);
        Assert.Contains($":{client.LocalEndPoint.Port} -> ", reason.Message); // names the connection
        await Poll.Until(() => !ProcessSockets.Holds(local, port), "the socket to the peer to be closed");
        AssertNothingHeld(client);
    }

    [Fact]
    public async Task Writes_after_a_close_has_begun_are_refused_while_the_close_is_still_under_way()
    {
        var settings = ConnectionSettings.Default.WithCloseTimeout(TimeSpan.FromSeconds(30));
        var (client, peer, _) = await ConnectToPeerThatNeverReads(settings);
        using var _ = peer;
        client.StartReading(new Receiver());
        Assert.True(client.TryWrite(ByteString.CopyFromUtf8("before the close")));

        // Taken now, a write would be dropped when the close ends: the caller must hear no.
        var closing = client.CloseAsync();
        for (var i = 0; i < 100; i++)
        {
            Assert.False(client.TryWrite(ByteString.CopyFromUtf8("too late")), $"write {i} after the close began was taken");
        }

        client.Abort();
        await Poll.Within(closing);
    }

    [Fact]
    public async Task An_abort_ends_a_connection_nobody_reads_whose_peer_has_sent_megabytes()
    {
        // The server side never starts reading while the client sends until it stalls: whatever that side holds (the
        // sockets stack's receive pipe, paused; DotNetty's unread socket), its abort must still end it.
        var client = ConnectionSettings.Default.WithWriteBufferWaterMarks(64 * 1024 * 1024, 32 * 1024 * 1024).WithSendBufferSize(64 * 1024);
        var (outbound, inbound) = await Connect(client, ConnectionSettings.Default.WithReceiveBufferSize(64 * 1024));
        var payload = ByteString.CopyFrom(new byte[64 * 1024]);
        for (var i = 0; i < 128; i++)
        {
            Assert.True(outbound.TryWrite(payload));
        }

        await Poll.Until(
            SendStall.Seen(() => outbound.UnsentBytes, written: 128L * payload.Length, sentMoreThan: 0),
            "the client's sending to stall on a server that does not read");

        inbound.Abort();
        await Poll.Within(inbound.Completion);
        outbound.Abort();
    }

    [Fact]
    public async Task Writes_after_an_abort_are_refused_at_once_and_refusals_above_the_mark_are_counted()
    {
        using var metrics = new FlushBatchingMetrics();
        using var recorder = new MeterRecorder(metrics);
        var settings = ConnectionSettings.Default.WithMetrics(metrics).WithSendBufferSize(64 * 1024);
        var (client, peer, _) = await ConnectToPeerThatNeverReads(settings);
        using var _ = peer;
        client.StartReading(new Receiver());
        await FillUntilRefused(client);
        Assert.Equal(1, recorder.Sum("flushbatching.writes.refused"));

        client.Abort();
        Assert.False(client.TryWrite(ByteString.CopyFromUtf8("after the abort")));
        await Poll.Within(client.Completion);
    }

    [Fact]
    public async Task A_payload_larger_than_a_frame_is_refused_naming_the_key_before_anything_is_queued()
    {
        var (client, _) = await Connect(ConnectionSettings.Default, ConnectionSettings.Default);
        var e = Assert.Throws<ArgumentException>(() => client.TryWrite(ByteString.CopyFrom(new byte[FramingSettings.Default.MaximumPayloadSize + 1])));
        Assert.Contains(SettingKeys.MaximumFrameSize, e.Message);
        Assert.Equal(0, client.UnsentBytes);
        Assert.True(client.TryWrite(ByteString.CopyFrom(new byte[FramingSettings.Default.MaximumPayloadSize])));
    }

    [Fact]
    public async Task A_close_to_a_peer_that_reads_delivers_everything_queued_before_the_end()
    {
        // The clock stands still, so the close's bound never passes: only the close itself can end the connection, and
        // once it has, no timer of its may be left armed.
        var clock = new TimerCountingClock();
        var settings = ConnectionSettings.Default.WithTimeProvider(clock);
        var (client, server) = await Connect(settings, settings);
        var received = new Receiver();
        server.StartReading(received);
        for (var i = 0; i < 2000; i++)
        {
            Assert.True(client.TryWrite(ByteString.CopyFrom(BitConverter.GetBytes(i))));
        }

        await Poll.Within(client.CloseAsync());

        for (var i = 0; i < 2000; i++)
        {
            Assert.Equal(i, BitConverter.ToInt32((await Poll.Within(received.Payloads.Reader.ReadAsync().AsTask())).Span));
        }

        Assert.Null(await Poll.Within(received.Closed.Task));
        await Poll.Until(() => clock.ArmedTimers == 0, "the close's timers to be disposed");
    }

    // A stack's connection to a raw peer that accepts and never reads, with a small receive window.
    private async Task<(ITransportConnection Client, Socket Peer, int Port)> ConnectToPeerThatNeverReads(ConnectionSettings settings)
    {
        var listener = RawPeer.Listen(receiveBufferSize: 16 * 1024);
        var endpoint = (IPEndPoint)listener.LocalEndPoint!;
        var accepting = listener.AcceptAsync();
        var client = await Poll.Within(Stack(settings).ConnectAsync(endpoint, settings));
        var peer = await Poll.Within(accepting);
        listener.Dispose();
        return (client, peer, endpoint.Port);
    }

    // Writes 64 KB payloads until the connection refuses one: the peer's window and both socket buffers are full and the
    // high-water mark is passed. Returns the bytes accepted.
    private static async Task<long> FillUntilRefused(ITransportConnection client)
    {
        var payload = ByteString.CopyFrom(new byte[64 * 1024]);
        long accepted = 0;
        var deadline = Stopwatch.StartNew();
        while (client.TryWrite(payload))
        {
            accepted += payload.Length;
            Assert.True(deadline.Elapsed < Poll.Patience, $"{accepted:N0} bytes accepted and none refused, by a peer that reads nothing");
            if (accepted % (1 << 20) == 0)
            {
                await Task.Delay(1);
            }
        }

        Assert.True(accepted > 0, "the first write was refused");
        return accepted;
    }
}
