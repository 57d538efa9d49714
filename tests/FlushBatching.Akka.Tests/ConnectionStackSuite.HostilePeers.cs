using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;
using FlushBatching.Akka.Tests.Support;
using FlushBatching.Framing;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Admission;
using FlushBatching.Tests.Support;
using Google.Protobuf;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// Peers that misbehave on purpose, from raw sockets: each case asserts the bound that ends it (within
/// <c>connection-timeout</c> and a margin for a shared machine) and that the stack still serves afterwards.
/// </summary>
public abstract partial class ConnectionStackSuite
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan Margin = TimeSpan.FromSeconds(5);

    [Fact]
    public async Task A_peer_that_never_starts_its_TLS_handshake_is_closed_within_connection_timeout_and_the_stack_still_serves()
    {
        // The bound also holds the honest client's handshake below, at the server: 5 s leaves a TLS handshake room on a
        // loaded machine (looped with fuzzers and other suites running, 1 s cut DotNetty's handshakes twice in nine runs
        // and 2 s once in 27).
        var bound = 5 * Bound;
        using var certificate = new SelfSignedCertificate();
        var settings = ConnectionSettings.Default.WithConnectTimeout(bound)
            .WithTls(TlsSettings.FromPfxFile(certificate.PfxPath, SelfSignedCertificate.Password).WithSuppressValidation(true));
        var endpoint = await Listen(settings);

        using var silent = await RawPeer.ConnectAsync(endpoint);
        await RawPeer.ClosedByTheOtherEndWithin(silent, bound + Margin, "the stack to close a peer that never sent its ClientHello");

        var rejected = await Poll.Within(_rejected.Reader.ReadAsync().AsTask());
        Assert.IsType<TimeoutException>(rejected);
        Assert.Contains(SettingKeys.ConnectTimeout, rejected.Message);

        var patient = settings.WithConnectTimeout(Poll.Patience);
        var client = await Poll.Within(Stack(patient).ConnectAsync(endpoint, patient));
        var server = await Poll.Within(_inbound.Reader.ReadAsync().AsTask());
        var received = new Receiver();
        server.StartReading(received);
        Assert.True(client.TryWrite(ByteString.CopyFromUtf8("still serving")));
        Assert.Equal("still serving", (await Poll.Within(received.Payloads.Reader.ReadAsync().AsTask())).ToStringUtf8());
    }

    [LinuxFact("counts this process's descriptors in /proc/self/fd")]
    public async Task A_bind_to_a_port_in_use_fails_every_time_and_leaves_no_descriptor_behind()
    {
        var taken = await Listen(ConnectionSettings.Default);
        static int Open() => Directory.GetFileSystemEntries("/proc/self/fd").Length;

        // Once first, so that whatever a first bind loads for good (the stack's own threads, say) is counted before.
        await Assert.ThrowsAnyAsync<Exception>(() => CreateStack(ConnectionSettings.Default).ListenAsync(taken, null, _ => { }, _ => { }));
        var before = Open();
        for (var i = 0; i < 20; i++)
        {
            var stack = CreateStack(ConnectionSettings.Default);
            await Assert.ThrowsAnyAsync<Exception>(() => stack.ListenAsync(taken, null, _ => { }, _ => { }));
            await Poll.Within(stack.StopAsync());
        }

        Assert.True(Open() <= before + 5, $"{Open() - before} descriptors more after 20 binds that failed");
    }

    [Fact]
    public async Task At_max_inbound_connections_the_stack_stops_accepting_says_so_once_and_accepts_again_when_one_ends()
    {
        // Two peers that speak at once, as Akka.Remote's do: a peer that never speaks would count among the silent, at
        // most one of two here, and be closed to make room.
        var settings = ConnectionSettings.Default.WithMaxInboundConnections(2);
        var endpoint = await Listen(settings);
        var first = await Poll.Within(Stack(settings).ConnectAsync(endpoint, settings));
        Assert.True(first.TryWrite(ByteString.CopyFromUtf8("first")));
        var firstAccepted = await Poll.Within(_inbound.Reader.ReadAsync().AsTask());
        var second = await Poll.Within(Stack(settings).ConnectAsync(endpoint, settings));
        Assert.True(second.TryWrite(ByteString.CopyFromUtf8("second")));
        await Poll.Within(_inbound.Reader.ReadAsync().AsTask());

        // The third waits in the backlog: connected as TCP sees it, never accepted, while the first two are open.
        using var third = await RawPeer.ConnectAsync(endpoint);
        var paused = await Poll.Within(_rejected.Reader.ReadAsync().AsTask());
        Assert.Contains("max-inbound-connections", paused.Message);
        Assert.Contains("2 inbound connections are open", paused.Message);
        await Task.Delay(300);
        Assert.False(_inbound.Reader.TryPeek(out _), "a connection was accepted past the bound");
        Assert.False(_rejected.Reader.TryPeek(out _), "the pause was reported more than once");

        // One of the two ends: its slot goes to the one waiting.
        firstAccepted.Abort();
        await Poll.Within(firstAccepted.Completion);
        await Poll.Within(_inbound.Reader.ReadAsync().AsTask());
    }

    [Fact]
    public async Task A_peer_that_has_spoken_is_never_closed_to_make_room_for_silent_strangers_and_its_frame_arrives_once_read()
    {
        // Room for two silent connections; the peer's frame is read by nobody until the strangers have come and gone.
        var settings = ConnectionSettings.Default.WithMaxInboundConnections(4);
        var endpoint = await Listen(settings);
        using var peer = await RawPeer.ConnectAsync(endpoint);
        var frame = new byte[FramingSettings.HeaderLength + 5];
        BinaryPrimitives.WriteInt32LittleEndian(frame, 5);
        "hello"u8.CopyTo(frame.AsSpan(FramingSettings.HeaderLength));
        await peer.SendAsync(frame);
        var held = await Poll.Within(_inbound.Reader.ReadAsync().AsTask());

        var strangers = new List<Socket>();
        try
        {
            for (var i = 0; i < 5; i++)
            {
                strangers.Add(await RawPeer.ConnectAsync(endpoint));
                await Task.Delay(SilentInbound.Grace);
            }

            await Poll.Until(() => strangers.Count(Closed) >= 2, "the stack to close the longest silent strangers");
            Assert.False(Closed(peer), "the peer that had spoken was closed");
            var closedAsSilent = await Poll.Within(ReadRejectedUntil(e => e.Message.Contains("sent nothing and was closed", StringComparison.Ordinal)));
            Assert.Contains(SettingKeys.MaxInboundConnections, closedAsSilent.Message);
        }
        finally
        {
            strangers.ForEach(stranger => stranger.Dispose());
        }

        var received = new Receiver();
        held.StartReading(received);
        Assert.Equal("hello", (await Poll.Within(received.Payloads.Reader.ReadAsync().AsTask())).ToStringUtf8());
    }

    // A socket whose other end has closed: readable, with nothing to read.
    private static bool Closed(Socket socket)
    {
        try
        {
            return socket.Poll(0, SelectMode.SelectRead) && socket.Available == 0;
        }
        catch (ObjectDisposedException)
        {
            return true;
        }
    }

    private async Task<Exception> ReadRejectedUntil(Func<Exception, bool> wanted)
    {
        while (true)
        {
            var rejected = await _rejected.Reader.ReadAsync();
            if (wanted(rejected))
            {
                return rejected;
            }
        }
    }

    [Theory]
    [InlineData(2)] // half a length prefix
    [InlineData(10)] // a prefix and part of its payload
    public async Task A_peer_that_closes_inside_a_frame_ends_the_connection_with_an_InvalidFrameException(int bytesSent)
    {
        var endpoint = await Listen(ConnectionSettings.Default);
        using var raw = await RawPeer.ConnectAsync(endpoint);
        var server = await Poll.Within(_inbound.Reader.ReadAsync().AsTask());
        var received = new Receiver();
        server.StartReading(received);

        var frame = new byte[FramingSettings.HeaderLength + 100];
        BinaryPrimitives.WriteInt32LittleEndian(frame, 100);
        await raw.SendAsync(frame.AsMemory(0, bytesSent));
        raw.Shutdown(SocketShutdown.Send);

        var reason = await Poll.Within(received.Closed.Task);
        Assert.IsType<InvalidFrameException>(reason);
        Assert.Contains("inside a frame", reason!.Message);
        Assert.Equal(0, received.Payloads.Reader.Count);
    }

    [Fact]
    public async Task A_peer_that_announces_a_huge_frame_and_sends_a_few_bytes_makes_the_stack_hold_only_those_bytes()
    {
        // maximum-frame-size at its largest allows the 1 GB announced; a stack that sized its buffer by the prefix
        // (the DotNetty stack once did, found by fuzzing) allocates it at once.
        var endpoint = await Listen(ConnectionSettings.Default.WithFraming(FramingSettings.Default.WithMaximumFrameSize(int.MaxValue)));
        using var raw = await RawPeer.ConnectAsync(endpoint);
        var server = await Poll.Within(_inbound.Reader.ReadAsync().AsTask());
        var received = new Receiver();
        server.StartReading(received);
        var before = GC.GetTotalAllocatedBytes(precise: true);

        var announced = new byte[FramingSettings.HeaderLength + 3];
        BinaryPrimitives.WriteInt32LittleEndian(announced, 1 << 30);
        await raw.SendAsync(announced);
        raw.Shutdown(SocketShutdown.Send);
        var reason = await Poll.Within(received.Closed.Task);

        var allocated = GC.GetTotalAllocatedBytes(precise: true) - before;
        Assert.True(allocated < 256L << 20, $"{allocated:N0} bytes allocated while a peer sent {announced.Length}");
        Assert.IsType<InvalidFrameException>(reason);
        Assert.Equal(0, received.Payloads.Reader.Count);
    }

    [LinuxFact("reads the process's sockets from /proc/net/tcp")]
    public async Task Peers_that_connect_while_the_stack_stops_listening_are_each_announced_or_closed_never_left_open()
    {
        // The window is an accept completing as the listener closes; rounds of peers racing the stop find it. The
        // DotNetty stack once left such a socket open with no owner (in 4 of 100 shutdowns of a node).
        for (var round = 0; round < 25; round++)
        {
            var announced = new List<ITransportConnection>();
            var stack = Stack(ConnectionSettings.Default);
            var endpoint = await stack.ListenAsync(
                new IPEndPoint(IPAddress.Loopback, 0), null, c => { lock (announced) { announced.Add(c); } }, _ => { });
            var peers = new List<Socket>();
            var connecting = Task.Run(async () =>
            {
                for (var i = 0; i < 8; i++)
                {
                    try
                    {
                        peers.Add(await RawPeer.ConnectAsync(endpoint));
                    }
                    catch (SocketException)
                    {
                        return; // refused: the listener is closed
                    }
                }
            });

            await Task.Delay(round % 3);
            await Poll.Within(stack.StopListeningAsync());
            await Poll.Within(connecting);

            // What was announced is the owner's to close, as the transport closes its connections at shutdown.
            lock (announced)
            {
                announced.ForEach(c => c.Abort());
            }

            await Poll.Within(stack.StopAsync());
            foreach (var peer in peers)
            {
                using var _ = peer;
                var port = ((IPEndPoint)peer.LocalEndPoint!).Port;
                var reading = RawPeer.ReadUntilClosedAsync(peer);
                if (await Task.WhenAny(reading, Task.Delay(Margin)) == reading)
                {
                    continue;
                }

                // Linux can leave a peer's connect complete with this end only a request in SYN_RECV when the listener
                // closes, which it later drops without a word (the peer's ACK lost to the closing listener; seen on both
                // stacks under load): no socket exists here for the stack to accept or close, and the kernel answers the
                // peer's first bytes with a reset. Anything else is a socket left open.
                var what = $"round {round}; this process holds {ProcessSockets.ConnectedTo(port)} socket(s) to the peer's port {port}; " +
                    $"{announced.Count} announced; still listening: {ProcessSockets.ListeningOn(endpoint.Port)}; " +
                    $"sockets with the peer's port: {ProcessSockets.Describe(port)}";
                Assert.True(ProcessSockets.NeverAccepted(port), $"waited {Margin.TotalSeconds} s for the stack to close a peer that connected as it stopped ({what})");
                await peer.SendAsync(new byte[] { 0 });
                Assert.True(await Task.WhenAny(reading, Task.Delay(Margin)) == reading, $"a peer the kernel never finished accepting was not reset when it sent ({what})");
                output.WriteLine($"round {round}: a peer's connect completed only at the peer's end ({what}); its first byte was reset");
            }
        }
    }

    [Fact]
    public async Task A_server_that_never_answers_the_TLS_handshake_fails_the_connect_within_connection_timeout_and_is_closed()
    {
        using var listener = RawPeer.Listen(backlog: 8);
        var settings = ConnectionSettings.Default.WithConnectTimeout(Bound).WithTls(TlsSettings.ForClient().WithSuppressValidation(true));

        var (connecting, accepted) = await ConnectedToListener(listener, settings, "the connect");
        using var _ = accepted;

        var failure = await FailsWithin(connecting, Bound + Margin, "the connect to give up on a handshake that never ends");
        Assert.IsType<TimeoutException>(failure);
        Assert.Contains(SettingKeys.ConnectTimeout, failure.Message);

        // No connection is left behind: the client closed its socket when the bound fired.
        await RawPeer.ClosedByTheOtherEndWithin(accepted, Margin, "the client to close the channel of the connect it gave up");
    }

    [LinuxFact("a listener whose accept queue is full drops further SYNs there; Windows refuses them, and retries a refused connect for about 2 s, so a 1 s bound passed there for another reason than this test claims")]
    public async Task A_connect_that_is_never_answered_fails_within_connection_timeout()
    {
        // A listener whose accept queue is full drops further SYNs: to the connector, an address that never answers.
        using var listener = RawPeer.Listen(backlog: 0);
        var endpoint = (IPEndPoint)listener.LocalEndPoint!;
        using var queued = await RawPeer.ConnectAsync(endpoint);
        var settings = ConnectionSettings.Default.WithConnectTimeout(Bound);

        var failure = await FailsWithin(Stack(settings).ConnectAsync(endpoint, settings), Bound + Margin, "the connect to give up on a peer that never answers");

        Assert.IsType<TimeoutException>(failure);
        Assert.Contains(SettingKeys.ConnectTimeout, failure.Message);
    }

    [Fact]
    public async Task Silent_peers_handshakes_past_their_bound_and_aborted_writes_leave_no_unobserved_task_exception()
    {
        using var unobserved = new UnobservedTaskExceptions();
        {
            using var certificate = new SelfSignedCertificate();
            var settings = ConnectionSettings.Default.WithConnectTimeout(TimeSpan.FromMilliseconds(300))
                .WithTls(TlsSettings.FromPfxFile(certificate.PfxPath, SelfSignedCertificate.Password).WithSuppressValidation(true));

            // Inbound: peers that never start their handshake, closed at the bound.
            var endpoint = await Listen(settings);
            for (var i = 0; i < 3; i++)
            {
                using var silent = await RawPeer.ConnectAsync(endpoint);
                await RawPeer.ClosedByTheOtherEndWithin(silent, Margin, "the stack to close a silent peer");
                await Poll.Within(_rejected.Reader.ReadAsync().AsTask());
            }

            // Outbound: servers that never answer the handshake, given up at the bound.
            using var listener = RawPeer.Listen(backlog: 8);
            for (var i = 0; i < 3; i++)
            {
                var (connecting, accepted) = await ConnectedToListener(listener, settings, $"outbound connect {i}");
                using var _ = accepted;
                await FailsWithin(connecting, Margin, "the connect to give up");
                await RawPeer.ClosedByTheOtherEndWithin(accepted, Margin, "the client to close the channel it gave up");
            }

            // Writes failed by an abort: megabytes queued to a peer that reads nothing, the close past its bound.
            var frozen = ConnectionSettings.Default.WithCloseTimeout(TimeSpan.FromMilliseconds(300)).WithSendBufferSize(64 * 1024);
            var (client, peer, _) = await ConnectToPeerThatNeverReads(frozen);
            using (peer)
            {
                client.StartReading(new Receiver());
                await FillUntilRefused(client);
                await Poll.Within(client.CloseAsync());
            }
        }

        var collected = unobserved.Collected();
        Assert.True(collected.Count == 0, $"{collected.Count} unobserved task exceptions, the first: {collected.FirstOrDefault()?.InnerException}");
    }

    // A connect to the listener, and the connection it made there, accepted. On a loaded machine a connect can give up at
    // its bound before its channel is even made; the connector closes that channel, unconnected, once it is made, and
    // nothing reaches the listener (seen in looped runs under heavy load, on both loop kinds). Such an attempt must have
    // failed with the stack's own connect-timeout error, and another is made, up to three in all. Past Poll.Patience with
    // nothing accepted and no such failure, or on the third attempt, the failure says what the connect and the thread
    // pool were doing.
    private async Task<(Task<ITransportConnection> Connecting, Socket Accepted)> ConnectedToListener(Socket listener, ConnectionSettings settings, string what)
    {
        var endpoint = (IPEndPoint)listener.LocalEndPoint!;
        var accepting = listener.AcceptAsync();
        for (var attempt = 1; ; attempt++)
        {
            var connecting = Stack(settings).ConnectAsync(endpoint, settings);
            if (await Task.WhenAny(accepting, Task.Delay(Poll.Patience)) == accepting)
            {
                return (connecting, await accepting);
            }

            var gaveUpUnmade = connecting.Exception?.GetBaseException() is TimeoutException timeout && timeout.Message.Contains(SettingKeys.ConnectTimeout);
            Assert.True(gaveUpUnmade && attempt < 3,
                $"{what}: no connection reached the listener in {Poll.Patience.TotalSeconds} s (attempt {attempt}); the connect is {connecting.Status} " +
                $"({connecting.Exception?.GetBaseException().Message}); thread pool: {ThreadPool.ThreadCount} threads, " +
                $"{ThreadPool.PendingWorkItemCount} items queued, {ThreadPool.CompletedWorkItemCount} done; sockets on :{endpoint.Port}: {ProcessSockets.Describe(endpoint.Port)}");
        }
    }

    private static async Task<Exception> FailsWithin(Task task, TimeSpan within, string what)
    {
        Assert.True(await Task.WhenAny(task, Task.Delay(within)) == task, $"waited {within.TotalSeconds} s for {what}");
        return await Assert.ThrowsAnyAsync<Exception>(() => task);
    }
}
