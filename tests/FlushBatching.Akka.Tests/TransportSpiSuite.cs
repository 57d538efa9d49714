using System.Diagnostics;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using Akka.Actor;
using Akka.Configuration;
using Akka.Event;
using Akka.Remote;
using Akka.Remote.Transport;
using FlushBatching.Akka.Tests.Support;
using FlushBatching.Tests.Support;
using Google.Protobuf;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// Akka.Remote's Transport SPI contract, driven directly: two transport instances on loopback, their events
/// collected. Each transport class gets one derived class that names it.
/// </summary>
public abstract class TransportSpiSuite : IAsyncLifetime
{
    private readonly List<Transport> _transports = [];
    private ActorSystem _system = null!;

    /// <summary>The transport class under test, as written in transport-class.</summary>
    protected abstract string TransportClass { get; }

    /// <summary>Lines every node this suite starts gets in its transport section: the variant of the stack under test.</summary>
    protected virtual string StackSection => "";

    /// <summary>Starts this suite's nodes, each with <see cref="StackSection"/>.</summary>
    protected NodeFactory Nodes => new(StackSection);

    public Task InitializeAsync()
    {
        _system = ActorSystem.Create("spi", Nodes.ConfigFor(TransportClass, hocon: "akka.actor.provider = local"));
        return Task.CompletedTask;
    }

    public async Task DisposeAsync()
    {
        // Bounded, so a shutdown that never ends fails this test instead of hanging the run.
        foreach (var transport in _transports)
        {
            await Poll.Within(transport.Shutdown());
        }

        await Poll.Within(_system.Terminate());
    }

    [Fact]
    public async Task Inbound_payloads_wait_for_the_read_handler_then_arrive_in_order()
    {
        var (server, serverAddress, inbound) = await Listen();
        var (client, _, _) = await Listen();
        using var sent = new MeterRecorder(((FlushBatchingTransport)client).Settings.Connection.Metrics);
        var outbound = await client.Associate(serverAddress);
        outbound.ReadHandlerSource.SetResult(new EventCollector());

        for (var i = 0; i < 100; i++)
        {
            Assert.True(outbound.Write(ByteString.CopyFrom(BitConverter.GetBytes(i))));
        }

        var handle = (await inbound.Next<InboundAssociation>()).Association;

        // An event, not a delay: every payload has gone to the client's socket, so on loopback it waits at the server
        // before anyone reads.
        await Poll.Until(() => sent.Sum("flushbatching.frames.sent") == 100, "the client to send every payload");
        var reader = new EventCollector();
        handle.ReadHandlerSource.SetResult(reader);
        for (var i = 0; i < 100; i++)
        {
            Assert.Equal(i, BitConverter.ToInt32((await reader.Next<InboundPayload>()).Payload.Span));
        }
    }

    [Fact]
    public async Task Frames_cut_into_pieces_at_any_point_arrive_as_whole_payloads_in_order()
    {
        var (_, serverAddress, inbound) = await Listen();
        using var raw = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await raw.ConnectAsync(IPAddress.Loopback, serverAddress.Port!.Value);
        var reader = new EventCollector();
        (await inbound.Next<InboundAssociation>()).Association.ReadHandlerSource.SetResult(reader);

        // Payloads of 0 to 300 bytes, framed back to back, sent in pieces of 1 to 7 bytes: every cut, through a
        // prefix or a payload, happens somewhere.
        var payloads = Enumerable.Range(0, 40).Select(i => Enumerable.Range(0, i * 7 % 301).Select(b => (byte)(b + i)).ToArray()).ToList();
        var stream = payloads.SelectMany(p => BitConverter.GetBytes(p.Length).Concat(p)).ToArray();
        for (int offset = 0, piece = 1; offset < stream.Length; offset += piece, piece = piece % 7 + 1)
        {
            await raw.SendAsync(stream.AsMemory(offset, Math.Min(piece, stream.Length - offset)));
            await Task.Delay(piece == 7 ? 1 : 0);
        }

        foreach (var payload in payloads)
        {
            Assert.Equal(payload, (await reader.Next<InboundPayload>()).Payload.ToByteArray());
        }
    }

    [Fact]
    public async Task Listening_on_the_IPv6_any_address_takes_IPv4_and_IPv6_peers()
    {
        // hostname = "::" is dual stack, as stock's DotNetty listener is there: the peers of a node on both families
        // reach it on one port.
        var (_, address, inbound) = await Listen("hostname = \"::\"");
        var (client, _, _) = await Listen();
        var port = address.Port!.Value;

        var outbound = await client.Associate(new Address(address.Protocol, address.System, "127.0.0.1", port));
        outbound.ReadHandlerSource.SetResult(new EventCollector());
        Assert.True(outbound.Write(ByteString.CopyFromUtf8("over IPv4")));
        var reader = new EventCollector();
        (await inbound.Next<InboundAssociation>()).Association.ReadHandlerSource.SetResult(reader);
        Assert.Equal("over IPv4", (await reader.Next<InboundPayload>()).Payload.ToStringUtf8());

        using var overIPv6 = new Socket(AddressFamily.InterNetworkV6, SocketType.Stream, ProtocolType.Tcp);
        await Poll.Within(overIPv6.ConnectAsync(IPAddress.IPv6Loopback, port));
        await inbound.Next<InboundAssociation>();
    }

    [Fact]
    public async Task Associate_to_a_closed_port_fails_with_InvalidAssociationException_without_waiting_for_the_connection_timeout()
    {
        // The refusal (RST) ends the attempt, not the timer: a long timeout keeps the bound far from a slow machine's
        // stalls and still fails a transport that waits for it.
        var (client, address, _) = await Listen("connection-timeout = 60s");
        var closedPort = RawPeer.ClosedEndPoint().Port;

        var stopwatch = Stopwatch.StartNew();
        var e = await Assert.ThrowsAsync<InvalidAssociationException>(() => client.Associate(address.WithPort(closedPort)));
        Assert.True(stopwatch.Elapsed < TimeSpan.FromSeconds(30), $"took {stopwatch.Elapsed}");
        Assert.Contains(closedPort.ToString(), e.Message);
    }

    [Fact]
    public async Task Disassociate_sends_what_is_pending_then_closes()
    {
        var (server, serverAddress, inbound) = await Listen();
        var (client, _, _) = await Listen();
        var outbound = await client.Associate(serverAddress);
        outbound.ReadHandlerSource.SetResult(new EventCollector());
        var handle = (await inbound.Next<InboundAssociation>()).Association;
        var reader = new EventCollector();
        handle.ReadHandlerSource.SetResult(reader);

        var payload = new byte[1000];
        for (var i = 0; i < 1000; i++)
        {
            BitConverter.TryWriteBytes(payload, i);
            Assert.True(outbound.Write(ByteString.CopyFrom(payload)));
        }

#pragma warning disable CS0618 // the SPI's own call
        outbound.Disassociate();
#pragma warning restore CS0618

        for (var i = 0; i < 1000; i++)
        {
            Assert.Equal(i, BitConverter.ToInt32((await reader.Next<InboundPayload>()).Payload.Span));
        }

        await reader.Next<Disassociated>();
    }

    [Fact]
    public async Task Write_refuses_above_the_high_water_mark_and_accepts_again_once_the_peer_reads()
    {
        const string marks = "write-buffer-high-water-mark = 64k, write-buffer-low-water-mark = 32k, send-buffer-size = 32k, receive-buffer-size = 32k";
        var (server, serverAddress, inbound) = await Listen(marks);
        var (client, _, _) = await Listen(marks);
        var outbound = await client.Associate(serverAddress);
        outbound.ReadHandlerSource.SetResult(new EventCollector());
        var handle = (await inbound.Next<InboundAssociation>()).Association;

        // The server holds its reads until its handler is registered, so the client's queue must fill. Write is refused
        // only once more than the mark is unsent (two payloads at least), and before more than the mark, a payload
        // and what the two sockets hold (32k each, doubled by Linux) have been taken.
        var payload = ByteString.CopyFrom(new byte[60_000]);
        var accepted = 0;
        while (outbound.Write(payload))
        {
            Assert.True(++accepted < 10_000, "Write never refused although nobody reads");
        }

        const long mark = 64 * 1024;
        Assert.True(accepted * (payload.Length + 4L) > mark, $"Write refused after {accepted} payloads, below the mark");
        Assert.True(accepted * (payload.Length + 4L) <= mark + payload.Length + 4 + 2 * 2 * 32 * 1024,
            $"Write took {accepted} payloads of {payload.Length} bytes before refusing, far above the mark ({mark}) and the sockets");

        var reader = new EventCollector();
        handle.ReadHandlerSource.SetResult(reader);
        await Poll.Until(() => outbound.Write(payload), "Write to accept again once the server reads");
        for (var i = 0; i <= accepted; i++)
        {
            Assert.Equal(60_000, (await reader.Next<InboundPayload>()).Payload.Length);
        }
    }

    [Fact]
    public async Task The_unsent_bytes_of_each_peer_have_a_series_of_their_own_the_slow_peer_s_stays_above_the_low_mark_while_refused_and_ends_with_its_association()
    {
        const string marks = "write-buffer-high-water-mark = 64k, write-buffer-low-water-mark = 32k, send-buffer-size = 32k, receive-buffer-size = 32k";
        const long lowMark = 32 * 1024;
        var (_, fastAddress, fastInbound) = await Listen(marks);
        var (_, slowAddress, _) = await Listen(marks);
        var (client, _, _) = await Listen(marks);
        using var metrics = new MeterRecorder(((FlushBatchingTransport)client).Settings.Connection.Metrics);
        var toFast = await client.Associate(fastAddress);
        var toSlow = await client.Associate(slowAddress);
        (await fastInbound.Next<InboundAssociation>()).Association.ReadHandlerSource.SetResult(new EventCollector());

        // The slow peer never registers its read handler: it reads into its own buffer until that is full, then not at
        // all. The client's queue to it fills, while everything written to the fast one goes out. Payloads far below the
        // marks' gap, so that on either stack a refusal means more than the low mark is unsent.
        var payload = ByteString.CopyFrom(new byte[1_000]);
        for (var i = 0; i < 200; i++)
        {
            await Poll.Until(() => toFast.Write(payload), "a write to the fast peer to be accepted");
        }

        await WriteUntilRefusedForASecond(toSlow, payload);

        long UnsentTo(Address peer) => metrics.ObserveSeries(TransportInstruments.PeerUnsentInstrument)
            .Where(series => (int)series.Tags[TransportInstruments.PeerPortTag]! == peer.Port).Select(series => series.Value).DefaultIfEmpty(-1).Single();
        await Poll.Until(() => UnsentTo(fastAddress) == 0, "the fast peer's series to read 0");

        var all = metrics.ObserveSeries(TransportInstruments.PeerUnsentInstrument);
        Assert.Equal(2, all.Count);
        Assert.All(all, series =>
        {
            Assert.Equal("outbound", series.Tags[TransportInstruments.DirectionTag]);
            Assert.Equal("127.0.0.1", series.Tags[TransportInstruments.PeerAddressTag]);
            Assert.StartsWith("akka.", (string)series.Tags[TransportInstruments.AddressTag]!);
        });

        // What the product promises, whatever the timing: writes are refused from above the high mark until the unsent
        // bytes fall to the low one. A reading taken between two refused writes (none accepted between, so the unsent
        // bytes only fell) is therefore above the low mark. Where the peer's side still takes bytes, a write may be
        // accepted in between: the next look tries again.
        var unsentWhileRefused = -1L;
        await Poll.Until(() =>
        {
            if (toSlow.Write(payload))
            {
                return false;
            }

            var unsent = UnsentTo(slowAddress);
            if (toSlow.Write(payload))
            {
                return false;
            }

            unsentWhileRefused = unsent;
            return true;
        }, "two writes to the slow peer refused in a row");
        Assert.True(unsentWhileRefused > lowMark, $"the slow peer's series reads {unsentWhileRefused} while its writes are refused, not above the low mark");

#pragma warning disable CS0618 // Akka.Remote's SPI: the overload with a reason calls this one.
        toSlow.Disassociate();
#pragma warning restore CS0618
        await Poll.Until(() => UnsentTo(slowAddress) == -1, "the slow peer's series to end with its association");
        Assert.Equal(0, UnsentTo(fastAddress));
    }

    [Fact]
    public async Task Two_hundred_associations_from_one_peer_add_up_in_one_series_on_each_side_and_none_once_they_end()
    {
        const int Associations = 200;
        var (server, serverAddress, inbound) = await Listen("connection-timeout = 60s");
        var (client, _, _) = await Listen();
        using var accepted = new MeterRecorder(((FlushBatchingTransport)server).Settings.Connection.Metrics);
        using var opened = new MeterRecorder(((FlushBatchingTransport)client).Settings.Connection.Metrics);
        for (var i = 0; i < Associations; i++)
        {
            await client.Associate(serverAddress);
            (await inbound.Next<InboundAssociation>()).Association.ReadHandlerSource.SetResult(new EventCollector());
        }

        // Inbound, the series names the peer's host alone: the port it connects from is new for every connection.
        var fromPeer = Assert.Single(accepted.ObserveSeries(TransportInstruments.PeerUnsentInstrument));
        Assert.Equal("inbound", fromPeer.Tags[TransportInstruments.DirectionTag]);
        Assert.Equal("127.0.0.1", fromPeer.Tags[TransportInstruments.PeerAddressTag]);
        Assert.False(fromPeer.Tags.ContainsKey(TransportInstruments.PeerPortTag));

        // Outbound, the connections to one peer add up in one series, at the port it listens on.
        var toPeer = Assert.Single(opened.ObserveSeries(TransportInstruments.PeerUnsentInstrument));
        Assert.Equal(serverAddress.Port, toPeer.Tags[TransportInstruments.PeerPortTag]);

        Assert.True(await Poll.Within(client.Shutdown()));
        await Poll.Until(() => accepted.ObserveSeries(TransportInstruments.PeerUnsentInstrument).Count == 0, "the inbound series to end");
        Assert.Empty(opened.ObserveSeries(TransportInstruments.PeerUnsentInstrument));
    }

    [Fact]
    public async Task A_peer_that_reconnects_twelve_times_keeps_one_series_on_each_side_and_leaves_none_once_gone()
    {
        var (server, serverAddress, inbound) = await Listen();
        var (client, _, _) = await Listen();
        using var accepted = new MeterRecorder(((FlushBatchingTransport)server).Settings.Connection.Metrics);
        using var opened = new MeterRecorder(((FlushBatchingTransport)client).Settings.Connection.Metrics);
        var seen = new HashSet<string>();
        void Look()
        {
            foreach (var (_, tags) in accepted.ObserveSeries(TransportInstruments.PeerUnsentInstrument).Concat(opened.ObserveSeries(TransportInstruments.PeerUnsentInstrument)))
            {
                seen.Add(string.Join(",", tags.OrderBy(tag => tag.Key).Select(tag => $"{tag.Key}={tag.Value}")));
            }
        }

        for (var round = 0; round < 12; round++)
        {
            var outbound = await client.Associate(serverAddress);
            outbound.ReadHandlerSource.SetResult(new EventCollector());
            var events = new EventCollector();
            (await inbound.Next<InboundAssociation>()).Association.ReadHandlerSource.SetResult(events);
            Look();
#pragma warning disable CS0618 // Akka.Remote's SPI: the overload with a reason calls this one.
            outbound.Disassociate();
#pragma warning restore CS0618
            await events.Next<Disassociated>();
            Look();
        }

        // One inbound series at the server (its host) and one outbound at the client (its address and port), over twelve
        // connections each from a new port, and none once the last has gone.
        Assert.True(seen.Count <= 2, $"{seen.Count} series over the run: {string.Join(" | ", seen)}");
        await Poll.Until(() => accepted.ObserveSeries(TransportInstruments.PeerUnsentInstrument).Count == 0
            && opened.ObserveSeries(TransportInstruments.PeerUnsentInstrument).Count == 0, "no series once the peer has gone");
    }

    [Fact]
    public async Task Shutdown_is_safe_to_repeat_and_later_calls_return_the_first_call_s_task()
    {
        var (server, serverAddress, _) = await Listen();
        var (client, _, _) = await Listen();
        await client.Associate(serverAddress);

        var first = server.Shutdown();
        var second = server.Shutdown();

        Assert.Same(first, second);
        Assert.True(await Poll.Within(first));
    }

    [Fact]
    public async Task Shutdown_closes_the_port_and_ends_every_association()
    {
        var (server, serverAddress, inbound) = await Listen();
        var (client, _, _) = await Listen();
        var outbound = await client.Associate(serverAddress);
        var clientEvents = new EventCollector();
        outbound.ReadHandlerSource.SetResult(clientEvents);
        (await inbound.Next<InboundAssociation>()).Association.ReadHandlerSource.SetResult(new EventCollector());

        Assert.True(await server.Shutdown());

        await clientEvents.Next<Disassociated>();
        await Assert.ThrowsAsync<InvalidAssociationException>(() => client.Associate(serverAddress));
    }

    [Fact]
    public async Task Listen_logs_one_info_line_with_the_address_the_stack_and_the_settings_and_takes_every_address()
    {
        var (transport, address, _) = await Listen();
        var stack = ((FlushBatchingTransport)transport).Stack.Description;
        var line = await OneLine("FlushBatching transport listening on");
        Assert.Equal(LogLevel.InfoLevel, line.LogLevel());
        Assert.Contains($"listening on akka.{address} (127.0.0.1:{address.Port}, {stack}); batching {{", line.ToString());
        Assert.True(transport.IsResponsibleFor(new Address("akka.tcp", "any", "10.0.0.1", 2552)));
    }

    [Fact]
    public async Task Associate_before_listen_or_after_shutdown_is_refused_saying_which()
    {
        var (_, otherAddress, _) = await Listen();
        var transport = Create("");
        Assert.Equal("remoteAddress", (await Assert.ThrowsAsync<ArgumentNullException>(() => transport.Associate(null!))).ParamName);
        var early = await Assert.ThrowsAsync<InvalidAssociationException>(() => transport.Associate(otherAddress));
        Assert.Contains("the transport is not listening", early.Message);

        await transport.Listen();
        await transport.Shutdown();
        var late = await Assert.ThrowsAsync<InvalidAssociationException>(() => transport.Associate(otherAddress));
        Assert.Contains("the transport is shut down", late.Message);
    }

    [Fact]
    public async Task An_inbound_peer_silent_past_connection_timeout_is_closed_disassociated_and_logged_once()
    {
        var (peer, _, events) = await InboundFromRawPeer("connection-timeout = 300ms");
        using var _ = peer;

        await RawPeer.ClosedByTheOtherEndWithin(peer, Poll.Patience, "the silent peer's connection to be closed");
        await events.Next<Disassociated>();
        await Poll.Until(() => WarningsLogged("dropped an inbound connection", "sent no frame within 300ms (connection-timeout)") == 1, "one WARNING for the silent peer");
        Assert.DoesNotContain(Logs, e => e.ToString()!.Contains("Association [")); // the setup line only, no disassociation line
    }

    [Fact]
    public async Task An_inbound_peer_that_has_spoken_outlives_the_silence_bound_and_its_reset_is_a_disassociation_line()
    {
        // A bound the peer's first frame meets on a loaded machine (from the connect to the send, the association's
        // set-up and the test's JIT pass: 300 ms was missed once in about ten runs, and the peer's send was reset).
        var (peer, _, events) = await InboundFromRawPeer("connection-timeout = 1s");
        await peer.SendAsync(new byte[] { 3, 0, 0, 0, 1, 2, 3 }); // one frame, little-endian prefix
        Assert.Equal(3, (await events.Next<InboundPayload>()).Payload.Length);

        // Two bounds pass with the peer quiet: having spoken once, it is not dropped as silent.
        var buffer = new byte[1];
        var read = peer.ReceiveAsync(buffer);
        Assert.NotSame(read, await Task.WhenAny(read, Task.Delay(TimeSpan.FromSeconds(2))));

        peer.LingerState = new LingerOption(true, 0);
        peer.Close(); // a reset

        // The close aborts the pending read: observed here, or its fault surfaces as an unobserved task exception in
        // whichever test's collection finalizes it (the silent-peers test counts those, and once counted this one).
        await Assert.ThrowsAnyAsync<Exception>(() => read);
        await events.Next<Disassociated>();
        await Poll.Until(() => Logs.Any(e => e.ToString()!.Contains("was reset by the peer")), "the disassociation line");
        Assert.Equal(0, WarningsLogged("dropped an inbound connection"));
    }

    // Over TLS the sockets stack reads through SslStream, which wraps a reset in an IOException: the line is the plain
    // one's all the same, an INFO, not a WARNING that the association ended on an error.
    [Fact]
    public async Task An_inbound_tls_peer_that_has_spoken_and_resets_is_the_same_disassociation_line_as_a_plain_one()
    {
        using var certificate = new SelfSignedCertificate();
        var (_, address, inbound) = await Listen($$"""
            enable-ssl = on
            ssl {
              certificate { path = {{Hocon.Quoted(certificate.PfxPath)}}, password = {{Hocon.Quoted(SelfSignedCertificate.Password)}} }
              require-mutual-authentication = off
            }
            """);
        using var peer = await RawPeer.ConnectAsync(new IPEndPoint(IPAddress.Loopback, address.Port!.Value));
        await using var tls = new SslStream(new NetworkStream(peer), leaveInnerStreamOpen: true, (_, _, _, _) => true);
        await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions { TargetHost = "localhost" });
        var handle = (await inbound.Next<InboundAssociation>()).Association;
        var events = new EventCollector();
        handle.ReadHandlerSource.SetResult(events);
        await tls.WriteAsync(new byte[] { 3, 0, 0, 0, 1, 2, 3 }); // one frame, little-endian prefix
        Assert.Equal(3, (await events.Next<InboundPayload>()).Payload.Length);

        peer.LingerState = new LingerOption(true, 0);
        peer.Close(); // a reset

        await events.Next<Disassociated>();
        await Poll.Until(() => Logs.Any(e => e.ToString()!.Contains("was reset by the peer")), "the disassociation line");
        Assert.DoesNotContain(Logs, e => e.LogLevel() == LogLevel.WarningLevel && e.ToString()!.Contains("Association ["));
    }

    [Fact]
    public async Task An_inbound_peer_that_resets_before_its_first_frame_is_one_setup_line_not_a_disassociation_line()
    {
        var (peer, _, events) = await InboundFromRawPeer("connection-timeout = 60s");

        peer.LingerState = new LingerOption(true, 0);
        peer.Close(); // a reset
        await events.Next<Disassociated>();
        await Poll.Until(() => WarningsLogged("dropped an inbound connection", "ended before its first frame") == 1, "one WARNING for the peer that reset");
        Assert.DoesNotContain(Logs, e => e.ToString()!.Contains("Association ["));
    }

    [Fact]
    public async Task An_association_disassociated_before_the_peer_spoke_is_one_setup_line()
    {
        var (peer, handle, _) = await InboundFromRawPeer("connection-timeout = 60s");
        using var _ = peer;

#pragma warning disable CS0618 // the SPI's own call
        handle.Disassociate();
#pragma warning restore CS0618

        await RawPeer.ClosedByTheOtherEndWithin(peer, Poll.Patience, "the closed association's socket");
        await Poll.Until(() => WarningsLogged("sent no frame before Akka.Remote closed it") == 1, "one WARNING for the unheard peer");
    }

    [Fact]
    public async Task Shutdown_aborts_a_connection_to_a_peer_that_stopped_reading_after_its_grace_and_says_what_was_left()
    {
        // A peer that accepted and never reads: the association's queue stays full of what the kernel cannot take.
        using var listening = RawPeer.Listen(receiveBufferSize: 32 * 1024);
        var (client, clientAddress, _) = await Listen("send-buffer-size = 32k");
        var outbound = await client.Associate(clientAddress.WithPort(((IPEndPoint)listening.LocalEndPoint!).Port));
        outbound.ReadHandlerSource.SetResult(new EventCollector());
        using var peer = await listening.AcceptAsync();
        var payload = ByteString.CopyFrom(new byte[60_000]);
        for (var accepted = 0; outbound.Write(payload); accepted++)
        {
            Assert.True(accepted < 10_000, "Write never refused although the peer reads nothing");
        }

        Assert.False(await Poll.Within(client.Shutdown()), "a shutdown that dropped unsent frames reported itself clean");
        await RawPeer.ClosedByTheOtherEndWithin(peer, Poll.Patience, "the aborted connection's socket");
        var line = await ShutdownLine();
        Assert.Matches(@"0 connection\(s\) closed, 1 aborted after 500ms with [1-9][\d]* bytes unsent", line);
    }

    [Fact]
    public async Task Shutdown_grants_connections_still_sending_the_close_bound_when_that_is_under_half_a_second()
    {
        var system = ActorSystem.Create("grace", Nodes.ConfigFor(TransportClass, hocon: "akka.actor.provider = local\nakka.remote.flush-wait-on-shutdown = 200ms"));
        try
        {
            var config = system.Settings.Config.GetConfig("akka.remote.dot-netty.tcp");
            var transport = (FlushBatchingTransport)NewTransport(system, config);
            Assert.Equal(TimeSpan.FromMilliseconds(200), transport.ShutdownGrace);
        }
        finally
        {
            await Poll.Within(system.Terminate());
        }
    }

    [Fact]
    public async Task With_flush_wait_on_shutdown_at_zero_a_disassociation_drops_what_is_unsent_at_once_as_stock_does()
    {
        // A configuration that starts on stock starts here: 0s is stock's own close, with nothing waited for.
        var system = ActorSystem.Create("no-wait", Nodes.ConfigFor(TransportClass, hocon: "akka.actor.provider = local\nakka.remote.flush-wait-on-shutdown = 0s"));
        var transports = new List<Transport>();
        try
        {
            var config = system.Settings.Config.GetConfig("akka.remote.dot-netty.tcp");
            async Task<(Transport, Address)> Listening()
            {
                var transport = NewTransport(system, config);
                transports.Add(transport);
                var (address, listener) = await transport.Listen();
                listener.SetResult(new EventCollector());
                return (transport, address);
            }

            var (_, serverAddress) = await Listening(); // never registers a read handler: it never reads
            var (client, _) = await Listening();
            var outbound = await client.Associate(serverAddress);
            outbound.ReadHandlerSource.SetResult(new EventCollector());
            await WriteUntilRefusedForASecond(outbound, ByteString.CopyFrom(new byte[60_000]));
            var connection = ((BatchingAssociationHandle)outbound).Connection;
            Assert.True(connection.UnsentBytes > 0, "nothing was left unsent to drop");

#pragma warning disable CS0618 // Akka.Remote's SPI: the overload with a reason calls this one.
            outbound.Disassociate();
#pragma warning restore CS0618
            await Poll.Within(connection.Completion);
            await Poll.Until(
                () => CollectingLogger.For(system).Any(e => e.LogLevel() == LogLevel.WarningLevel && e.ToString()!.Contains("was aborted after 0ms (akka.remote.flush-wait-on-shutdown)")),
                "the WARNING that the close was aborted at once");
        }
        finally
        {
            foreach (var transport in transports)
            {
                await Poll.Within(transport.Shutdown());
            }

            await Poll.Within(system.Terminate());
        }
    }

    [Fact]
    public async Task Shutdown_with_an_idle_association_reports_itself_clean()
    {
        var (_, serverAddress, inbound) = await Listen();
        var (client, _, _) = await Listen();
        var outbound = await client.Associate(serverAddress);
        outbound.ReadHandlerSource.SetResult(new EventCollector());
        (await inbound.Next<InboundAssociation>()).Association.ReadHandlerSource.SetResult(new EventCollector());

        // The one connection open, closed within the grace, or (on a machine too slow for 500ms) aborted with nothing
        // left: clean either way. A connection the transport did not track would count in neither.
        Assert.True(await Poll.Within(client.Shutdown()));
        Assert.Matches(@"(1 connection\(s\) closed, 0 aborted|0 connection\(s\) closed, 1 aborted) after 500ms with 0 bytes unsent", await ShutdownLine());
    }

    [Theory]
    [InlineData("batching.max-pending-writes = thirty", "batching.max-pending-writes", "thirty")]
    [InlineData("enable-ssl = on\nssl.certificate.path = \"/nonexistent/node.pfx\"", "ssl.certificate.path", "/nonexistent/node.pfx")]
    public async Task A_bad_value_or_a_missing_certificate_is_logged_at_error_naming_the_key_before_the_transport_throws(string section, string key, string value)
    {
        var e = Assert.ThrowsAny<Exception>(() => Create(section));

        Assert.IsType<InvalidSettingException>(e.InnerException);
        await Poll.Until(() => ErrorLogged(key, value), "an ERROR line naming the key and the value");
    }

    [Fact]
    public async Task A_port_in_use_is_logged_at_error_naming_it_before_listen_throws()
    {
        using var taken = RawPeer.Listen();
        var port = ((IPEndPoint)taken.LocalEndPoint!).Port;

        await Assert.ThrowsAsync<RemoteTransportException>(() => Create($"port = {port}").Listen());

        await Poll.Until(() => ErrorLogged($"127.0.0.1:{port}"), "an ERROR line naming the address");
    }

    // Logging is asynchronous: a line may reach the collector after the call that logged it has returned.
    private async Task<LogEvent> OneLine(string text)
    {
        await Poll.Until(() => Logs.Any(e => e.ToString()!.Contains(text)), $"a line with '{text}'");
        return Assert.Single(Logs, e => e.ToString()!.Contains(text));
    }

    private async Task<string> ShutdownLine() => (await OneLine("FlushBatching transport shut down in")).ToString()!;

    // Writes payload until writes stay refused for a second: a peer that never reads then holds all it will, in its
    // socket and in its transport's read buffer, and the rest waits unsent here.
    private static async Task WriteUntilRefusedForASecond(AssociationHandle handle, ByteString payload)
    {
        var accepted = 0L;
        for (var refused = Stopwatch.StartNew(); refused.Elapsed < TimeSpan.FromSeconds(1);)
        {
            if (handle.Write(payload))
            {
                accepted += payload.Length;
                Assert.True(accepted < 64 * 1024 * 1024, $"the peer took {accepted} bytes although it never reads");
                refused.Restart();
            }
            else
            {
                await Task.Delay(10);
            }
        }
    }

    private int LinesLogged(LogLevel level, params string[] parts) =>
        CollectingLogger.For(_system).Count(e => e.LogLevel() == level && parts.All(e.ToString()!.Contains));

    private int WarningsLogged(params string[] parts) => LinesLogged(LogLevel.WarningLevel, parts);

    private bool ErrorLogged(params string[] parts) => LinesLogged(LogLevel.ErrorLevel, parts) > 0;

    // A raw socket connected to a fresh transport (configured with section), and the inbound handle it made, read by
    // the events collector returned: a peer that behaves only as far as a test tells it to.
    private async Task<(Socket Peer, AssociationHandle Handle, EventCollector Events)> InboundFromRawPeer(string section)
    {
        var (_, address, inbound) = await Listen(section);
        var peer = await RawPeer.ConnectAsync(new IPEndPoint(IPAddress.Loopback, address.Port!.Value));
        var handle = (await inbound.Next<InboundAssociation>()).Association;
        var events = new EventCollector();
        handle.ReadHandlerSource.SetResult(events);
        return (peer, handle, events);
    }

    // The transport class under test, made as Akka.Remote makes it: from its ActorSystem and its section.
    private Transport NewTransport(ActorSystem system, Config section) =>
        (Transport)Activator.CreateInstance(Type.GetType(TransportClass, throwOnError: true)!, system, section)!;

    private Transport Create(string section)
    {
        var config = Nodes.ConfigFor(TransportClass, section).GetConfig("akka.remote.dot-netty.tcp");
        var transport = NewTransport(_system, config);
        _transports.Add(transport);
        return transport;
    }

    /// <summary>What the suite's ActorSystem (the transports' own) has logged so far.</summary>
    private protected IReadOnlyList<LogEvent> Logs => CollectingLogger.For(_system);

    private protected async Task<(Transport Transport, Address Address, EventCollector Inbound)> Listen(string section = "")
    {
        var transport = Create(section);
        var (address, listenerSource) = await transport.Listen();
        var inbound = new EventCollector();
        listenerSource.SetResult(inbound);
        return (transport, address, inbound);
    }
}
