using System.Net;
using System.Net.Sockets;

namespace FlushBatching.Tests.Support;

/// <summary>A peer on a raw socket, for tests that misbehave on purpose where a transport would not.</summary>
public static class RawPeer
{
    /// <summary>
    /// A loopback endpoint nothing listens on: a port the system gave out once and took back. The one free-port helper:
    /// a node that must listen where a seed list or a relay points takes its port.
    /// </summary>
    public static IPEndPoint ClosedEndPoint()
    {
        using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        probe.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        return (IPEndPoint)probe.LocalEndPoint!;
    }

    /// <summary>
    /// A loopback listener that accepts only when the test asks. A receive buffer given here is set before any
    /// connection, so the kernel does not grow it: a peer that never reads then holds little.
    /// </summary>
    public static Socket Listen(int backlog = 1, int receiveBufferSize = 0)
    {
        var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        if (receiveBufferSize > 0)
        {
            listener.ReceiveBufferSize = receiveBufferSize;
        }

        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(backlog);
        return listener;
    }

    /// <summary>Connects to <paramref name="endpoint"/> and sends nothing.</summary>
    public static async Task<Socket> ConnectAsync(IPEndPoint endpoint)
    {
        var raw = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await Poll.Within(raw.ConnectAsync(endpoint));
        return raw;
    }

    /// <summary>
    /// Connects to <paramref name="endpoint"/> and waits for the other end to close or reset the connection. A listener
    /// that resets a connection at once can do so before the connect completes on this side, and the connect then fails
    /// with a reset: that is the close awaited, not a failure.
    /// </summary>
    public static async Task ConnectAndAwaitCloseAsync(IPEndPoint endpoint, TimeSpan within, string what)
    {
        Socket raw;
        try
        {
            raw = await ConnectAsync(endpoint);
        }
        catch (SocketException e) when (e.SocketErrorCode == SocketError.ConnectionReset)
        {
            return;
        }

        using (raw)
        {
            await ClosedByTheOtherEndWithin(raw, within, what);
        }
    }

    /// <summary>Reads (and drops) what the other end sends until it closes or resets the connection, or fails.</summary>
    public static async Task ClosedByTheOtherEndWithin(Socket raw, TimeSpan within, string what)
    {
        var reading = ReadUntilClosedAsync(raw);
        Assert.True(await Task.WhenAny(reading, Task.Delay(within)) == reading, $"waited {within.TotalSeconds} s for {what}");
    }

    /// <summary>Reads (and drops) what the other end sends; completes when it closes or resets the connection.</summary>
    public static async Task ReadUntilClosedAsync(Socket raw)
    {
        var buffer = new byte[4096];
        try
        {
            while (await raw.ReceiveAsync(buffer) > 0)
            {
            }
        }
        catch (SocketException)
        {
            // A reset ends it too.
        }
    }
}
