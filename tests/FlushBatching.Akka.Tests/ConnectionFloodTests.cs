using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using Akka.Actor;
using FlushBatching.Akka.Tests.Support;
using FlushBatching.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// A node under <c>ulimit -n 256</c>, in a process of its own with its thread pool free to grow as in production
/// (lab/FloodNode), flooded with 400 connections held open, then closed, while a stock peer already associated asks it
/// something every 100 ms. The node keeps descriptors in reserve (<c>max-inbound-connections = auto</c>): it lives, its
/// peer's asks are each answered within a second, a new peer is served while the flood lasts (the longest silent of the
/// flood's connections make room for it), and another once the flood is over.
/// </summary>
/// <remarks>
/// Before the bound, such a node used 255 of its 256 descriptors during the flood, and one run in six died with the
/// runtime's own "Out of memory." (a thread it could not start: the runtime needs a pipe for each). The descriptor count
/// is what this test holds to, at every sample: a death itself is too rare to be a test.
/// </remarks>
public sealed class ConnectionFloodTests
{
    private const int Limit = 256;
    private const int Flood = 400;

    [LinuxTheory("lowers the node's descriptor limit with ulimit and counts /proc/PID/fd")]
    [InlineData("flushbatching")]
    [InlineData("flushbatching-dotnetty")]
    [InlineData("flushbatching-dotnetty-dedicated")]
    public async Task A_flood_of_connections_leaves_the_node_alive_with_descriptors_to_spare_serving_its_peer_and_accepting_after(string transport)
    {
        using var node = FloodNode.Start(transport, Limit);
        await using var peer = Node.Start("peer", Node.Stock);

        // Started before the flood, so that its start-up's CPU in this process does not delay the peer's asks.
        await using var during = Node.Start("during", Node.Stock);
        var echo = await peer.System.ActorSelection(node.Address + "/user/echo").ResolveOne(TimeSpan.FromSeconds(10));

        using var stop = new CancellationTokenSource();
        var clock = Stopwatch.StartNew();
        var asks = AskEvery100MsAsync(echo, clock, stop.Token);
        await Task.Delay(TimeSpan.FromSeconds(1));
        var floodStarted = clock.Elapsed;

        var mostOpen = 0;
        var flood = new List<Socket>();
        Task<TimeSpan> servedDuring;
        try
        {
            for (var i = 0; i < Flood; i++)
            {
                var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
                flood.Add(socket);
                _ = socket.ConnectAsync(IPAddress.Loopback, node.Port);
            }

            // A peer new to the node, while the flood's connections are held and silent: with the listener paused at its
            // bound, it waited in the backlog until the flood ended.
            servedDuring = NewPeerServedWithin(during, node, TimeSpan.FromSeconds(4));
            for (var held = Stopwatch.StartNew(); held.Elapsed < TimeSpan.FromSeconds(6);)
            {
                mostOpen = Math.Max(mostOpen, node.OpenDescriptors());
                Assert.False(node.HasExited, $"the node died during the flood: {node.Errors}");
                await Task.Delay(200);
            }

            Assert.True(servedDuring.IsCompleted, "a new peer was not served while the flood lasted");
        }
        finally
        {
            flood.ForEach(socket => socket.Dispose());
        }

        var floodEnded = clock.Elapsed;

        var servedAfter = await servedDuring;

        await Task.Delay(TimeSpan.FromSeconds(2));
        await stop.CancelAsync();
        var (answered, slowest, lost) = await asks;
        // When an ask is lost or slow, the timeline says in which phase: before, during or after the flood.
        var timeline = $"asks lost at {string.Join(", ", lost.Select(at => $"{at.TotalSeconds:F1} s"))}; slowest answered at {slowest.At.TotalSeconds:F1} s; " +
            $"the flood from {floodStarted.TotalSeconds:F1} s to {floodEnded.TotalSeconds:F1} s, the node's errors: {node.Errors}; its log:{Environment.NewLine}{node.Log}";

        Assert.False(node.HasExited, $"the node died after the flood: {node.Errors}");
        Assert.True(mostOpen <= Limit - 16, $"the node had {mostOpen} of its {Limit} descriptors open during the flood");
        Assert.True(lost.Count == 0 && answered >= 50, $"{lost.Count} asks lost, {answered} answered; {timeline}");
        Assert.True(slowest.Took < TimeSpan.FromSeconds(1), $"the slowest ask took {slowest.Took.TotalMilliseconds:F0} ms; {timeline}");

        Assert.True(servedAfter < TimeSpan.FromSeconds(4), $"the new peer was served {servedAfter.TotalSeconds:F1} s into the flood");

        // Accepting again: a peer new to the node associates and is answered.
        await using var newcomer = Node.Start("after", Node.Stock);
        await NewPeerServedWithin(newcomer, node, TimeSpan.FromSeconds(10));
    }

    [LinuxTheory("lowers the node's descriptor limit with ulimit and counts /proc/PID/fd")]
    [InlineData("flushbatching")]
    [InlineData("flushbatching-dotnetty")]
    public async Task Two_systems_in_one_process_share_its_descriptors_and_both_flooded_keep_it_alive(string transport)
    {
        // Each system's listener derived its bound alone before: together they could accept about twice what was free.
        // The flood's connections each send a byte, so that none is closed as silent: each holds its slot.
        using var node = FloodNode.Start(transport, Limit, systems: 2);
        var flood = new List<Socket>();
        var mostOpen = 0;
        try
        {
            foreach (var address in node.Addresses)
            {
                for (var i = 0; i < Flood; i++)
                {
                    var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
                    flood.Add(socket);
                    _ = ConnectAndSpeakAsync(socket, address.Port!.Value);
                }
            }

            for (var held = Stopwatch.StartNew(); held.Elapsed < TimeSpan.FromSeconds(6);)
            {
                mostOpen = Math.Max(mostOpen, node.OpenDescriptors());
                Assert.False(node.HasExited, $"the process died during the flood: {node.Errors}");
                await Task.Delay(200);
            }
        }
        finally
        {
            flood.ForEach(socket => socket.Dispose());
        }

        Assert.False(node.HasExited, $"the process died after the flood: {node.Errors}");
        Assert.True(mostOpen <= Limit - 16, $"the process had {mostOpen} of its {Limit} descriptors open during the flood; its log:{Environment.NewLine}{node.Log}");

        // Both accept again.
        foreach (var address in node.Addresses)
        {
            await using var newcomer = Node.Start("after", Node.Stock);
            var echo = await newcomer.System.ActorSelection(address + "/user/echo").ResolveOne(TimeSpan.FromSeconds(10));
            Assert.Equal("after", await echo.Ask<string>("after", TimeSpan.FromSeconds(10)));
        }
    }

    [LinuxTheory("lowers the node's descriptor limit with ulimit")]
    [InlineData("flushbatching", false)]
    [InlineData("flushbatching", true)]
    [InlineData("flushbatching-dotnetty", false)]
    [InlineData("flushbatching-dotnetty", true)]
    [InlineData("flushbatching-dotnetty-dedicated", false)]
    [InlineData("flushbatching-dotnetty-dedicated", true)]
    public async Task Strangers_that_reopen_every_connection_closed_never_keep_a_new_peer_out(string transport, bool tls)
    {
        // A node bounded at 16 inbound connections; 48 strangers that never send a byte, each reopening its connection the
        // moment the node closes it, for as long as the test runs. With TLS, a silent stranger sits before the handshake.
        using var certificate = new SelfSignedCertificate();
        var ssl = tls ? SuppressedTls(certificate) : "";
        using var node = FloodNode.Start(transport, 4096, "max-inbound-connections = 16", ssl);
        await using var peer = Node.Start("peer", Node.Stock, ssl);
        await using var during = Node.Start("during", Node.Stock, ssl);
        IActorRef echo;
        try
        {
            echo = await peer.System.ActorSelection(node.Address + "/user/echo").ResolveOne(TimeSpan.FromSeconds(10));
        }
        catch (ActorNotFoundException e)
        {
            throw new InvalidOperationException($"the peer did not reach the node before the flood; the node's log:{Environment.NewLine}{node.Log}", e);
        }

        using var stop = new CancellationTokenSource();
        var clock = Stopwatch.StartNew();
        var asks = AskEvery100MsAsync(echo, clock, stop.Token);
        var strangers = Enumerable.Range(0, 48).Select(_ => ReopenWhileSilentAsync(node.Port, stop.Token)).ToList();
        await Task.Delay(TimeSpan.FromSeconds(2));

        TimeSpan servedDuring;
        try
        {
            servedDuring = await NewPeerServedWithin(during, node, TimeSpan.FromSeconds(10));
        }
        catch (ActorNotFoundException e)
        {
            await stop.CancelAsync();
            throw new InvalidOperationException($"the new peer was not served; the node's log:{Environment.NewLine}{node.Log}", e);
        }

        await Task.Delay(TimeSpan.FromSeconds(3));
        await stop.CancelAsync();
        var reopened = (await Task.WhenAll(strangers)).Sum();
        var (answered, slowest, lost) = await asks;
        var timeline = $"asks lost at {string.Join(", ", lost.Select(at => $"{at.TotalSeconds:F1} s"))}; slowest answered at {slowest.At.TotalSeconds:F1} s; " +
            $"the strangers' connections closed by the node: {reopened}; the node's errors: {node.Errors}; its log:{Environment.NewLine}{node.Log}";

        Assert.False(node.HasExited, $"the node died: {node.Errors}");
        Assert.True(servedDuring < TimeSpan.FromSeconds(2), $"the new peer was served {servedDuring.TotalSeconds:F1} s after it asked; {timeline}");
        Assert.True(lost.Count == 0 && answered >= 30, $"{lost.Count} asks lost, {answered} answered; {timeline}");
        Assert.True(slowest.Took < TimeSpan.FromSeconds(1), $"the slowest ask took {slowest.Took.TotalMilliseconds:F0} ms; {timeline}");
        Assert.True(reopened > 48, $"the node closed only {reopened} of the strangers' connections: the flood did not press on the bound; {timeline}");
    }

    // Connects and sends one byte, the start of a frame it never finishes; whatever fails is the flood's own business.
    private static async Task ConnectAndSpeakAsync(Socket socket, int port)
    {
        try
        {
            await socket.ConnectAsync(IPAddress.Loopback, port);
            await socket.SendAsync(new byte[1]);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            // Refused, reset or closed by the test's end.
        }
    }

    // One stranger: connects, sends nothing, and connects again as soon as the node closes it, until stopped. How many
    // of its connections the node closed.
    private static async Task<int> ReopenWhileSilentAsync(int port, CancellationToken stop)
    {
        var closedByNode = 0;
        var buffer = new byte[1];
        while (!stop.IsCancellationRequested)
        {
            using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            try
            {
                await socket.ConnectAsync(IPAddress.Loopback, port, stop);
                await socket.ReceiveAsync(buffer, SocketFlags.None, stop);
                closedByNode++;
            }
            catch (SocketException)
            {
                closedByNode++;
                await Task.Delay(10, CancellationToken.None);
            }
            catch (OperationCanceledException)
            {
                break;
            }
        }

        return closedByNode;
    }

    private static string SuppressedTls(SelfSignedCertificate certificate) => $$"""
        enable-ssl = on
        ssl {
          certificate { path = {{Hocon.Quoted(certificate.PfxPath)}}, password = {{Hocon.Quoted(SelfSignedCertificate.Password)}} }
          suppress-validation = on
        }
        """;

    // A stock node new to the flooded node resolves its echo and is answered: how long that took.
    private static async Task<TimeSpan> NewPeerServedWithin(Node newcomer, FloodNode node, TimeSpan bound)
    {
        var watch = Stopwatch.StartNew();
        var echo = await newcomer.System.ActorSelection(node.Address + "/user/echo").ResolveOne(bound);
        Assert.Equal(newcomer.System.Name, await echo.Ask<string>(newcomer.System.Name, bound));
        return watch.Elapsed;
    }

    // Asks until stopped: how many were answered, the slowest answer (how long it took, and when on the clock it was
    // asked), and when each lost ask was asked.
    private static async Task<(int Answered, (TimeSpan Took, TimeSpan At) Slowest, List<TimeSpan> Lost)> AskEvery100MsAsync(
        IActorRef echo, Stopwatch clock, CancellationToken stop)
    {
        var answered = 0;
        var lost = new List<TimeSpan>();
        var slowest = (Took: TimeSpan.Zero, At: TimeSpan.Zero);
        while (!stop.IsCancellationRequested)
        {
            var asked = clock.Elapsed;
            try
            {
                await echo.Ask<int>(answered + lost.Count, TimeSpan.FromSeconds(1));
                answered++;
                var took = clock.Elapsed - asked;
                slowest = took > slowest.Took ? (took, asked) : slowest;
            }
            catch (AskTimeoutException)
            {
                lost.Add(asked);
            }

            try
            {
                await Task.Delay(100, stop);
            }
            catch (OperationCanceledException)
            {
                break;
            }
        }

        return (answered, slowest, lost);
    }
}
