using System.Net;
using System.Net.Sockets;

namespace FlushBatching.Tests.Support;

/// <summary>A plain socket on the other end of a connection under test: it sees only what reaches the wire.</summary>
public static class RawPeer
{
    /// <summary>A socket connected to <paramref name="endpoint"/>, nothing sent.</summary>
    public static async Task<Socket> ConnectAsync(IPEndPoint endpoint)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(endpoint);
        return socket;
    }

    /// <summary>
    /// Reads <paramref name="socket"/> until its other end has closed or reset the connection; fails when that takes
    /// longer than <see cref="FrameCollector.Patience"/>, which is what a socket left open looks like from here.
    /// </summary>
    public static async Task AssertEndedByOtherEndAsync(Socket socket)
    {
        var buffer = new byte[4096];
        try
        {
            // Whatever comes first (a TLS alert, say) is read past: only the end counts.
            while (await socket.ReceiveAsync(buffer.AsMemory()).AsTask().WaitAsync(FrameCollector.Patience) > 0)
            {
            }
        }
        catch (SocketException e) when (e.SocketErrorCode == SocketError.ConnectionReset)
        {
        }
    }
}
