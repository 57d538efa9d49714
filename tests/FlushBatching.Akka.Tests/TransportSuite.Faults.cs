using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;
using Akka.Actor;
using Akka.Event;
using FlushBatching.Akka.Tests.Support;
using FlushBatching.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>Bad input from peers and from configuration.</summary>
public abstract partial class TransportSuite
{
    public static TheoryData<string, byte[]> BadInputs => new()
    {
        { "a frame length above the maximum", LengthPrefix(1_000_000) },
        { "a negative frame length", LengthPrefix(-5) },
        { "garbage in a well-formed frame", [.. LengthPrefix(16), .. "not an akka pdu!"u8] },
        { "a reset in the middle of a frame", [.. LengthPrefix(100), .. new byte[10]] },
    };

    [Theory]
    [MemberData(nameof(BadInputs))]
    public async Task Bad_input_from_a_raw_socket_drops_that_connection_and_the_node_keeps_serving(string what, byte[] bytes)
    {
        await using var server = Nodes.Start("server", TransportClass);
        await using var client = Nodes.Start("client", TransportClass);
        server.System.ActorOf(Props.Create<Echo>(), "echo");
        var echo = await server.Resolve(client, "echo");

        using var raw = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await raw.ConnectAsync(IPAddress.Loopback, server.Address.Port!.Value);
        var rawPort = ((IPEndPoint)raw.LocalEndPoint!).Port.ToString();
        await raw.SendAsync(bytes);
        if (what.Contains("reset"))
        {
            raw.LingerState = new LingerOption(true, 0);
            raw.Close();
        }
        else
        {
            // The node must drop the connection: the raw socket reads its end.
            await Poll.Until(() => !raw.Connected || raw.Poll(0, SelectMode.SelectRead) && raw.Available == 0, $"the node to drop the connection after {what}");
        }

        await Poll.Until(() => server.Logs.Any(e => Mentions(e, rawPort)), $"a log line about the connection after {what}");
        Assert.Equal("still serving", await echo.Ask<string>("still serving", AskTimeout));
        var lines = server.Logs.Where(e => Mentions(e, rawPort) && e.LogSource.Contains("Batching")).ToList();
        Assert.True(lines.Count <= 1, $"expected at most one line from the transport, got: {string.Join(" | ", lines)}");
    }

    [Theory]
    [InlineData("batching.max-pending-writes = thirty", "batching.max-pending-writes", "'thirty'")]
    [InlineData("connection-timeout = 0s", "connection-timeout", "'0s'")]
    [InlineData("maximum-frame-size = 1000b", "maximum-frame-size", "'1000b'")]
    public void A_bad_config_value_stops_the_ActorSystem_from_starting_naming_the_key(string section, string key, string value)
    {
        var e = Assert.ThrowsAny<Exception>(() => Nodes.Start("misconfigured", TransportClass, section));

        var messages = string.Join(" <- ", Chain(e).Select(inner => inner.Message));
        Assert.Contains(key, messages);
        Assert.Contains(value, messages);
    }

    private static byte[] LengthPrefix(int length)
    {
        var prefix = new byte[4];
        BinaryPrimitives.WriteInt32LittleEndian(prefix, length);
        return prefix;
    }

    // The transport names the connection's endpoints in the message; Akka's protocol layer names it in the log source.
    private static bool Mentions(LogEvent e, string port) => e.ToString().Contains(port);

    private static IEnumerable<Exception> Chain(Exception? e)
    {
        for (; e is not null; e = e.InnerException)
        {
            yield return e;
        }
    }
}
