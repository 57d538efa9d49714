using System.Diagnostics;
using System.Text.RegularExpressions;

namespace FlushBatching.Tests.Support;

/// <summary>
/// The options the kernel holds for each established TCP connection with a port at either end, read with <c>ss</c>:
/// what a stack gave its sockets, seen from outside the stack. The kernel reports buffer sizes twice what was asked.
/// </summary>
public sealed record KernelSocketOptions(int LocalPort, int ReceiveBuffer, int SendBuffer, bool KeepAlive)
{
    /// <summary>Every established connection with <paramref name="port"/> at either end, both ends when both are here.</summary>
    public static IReadOnlyList<KernelSocketOptions> Established(int port)
    {
        using var ss = Process.Start(new ProcessStartInfo("ss", ["-tnmio", "state", "established", $"( sport = :{port} or dport = :{port} )"])
        {
            RedirectStandardOutput = true,
        })!;
        var output = ss.StandardOutput.ReadToEnd();
        ss.WaitForExit();
        // A connection is a line with its addresses (and a keepalive timer when armed), then a line with its skmem.
        return Regex.Matches(output, @"\S*:(\d+)\s+\S*:\d+(.*)\n\s+skmem:\(r\d+,rb(\d+),t\d+,tb(\d+)")
            .Select(m => new KernelSocketOptions(int.Parse(m.Groups[1].Value), int.Parse(m.Groups[3].Value), int.Parse(m.Groups[4].Value),
                m.Groups[2].Value.Contains("keepalive", StringComparison.Ordinal)))
            .ToList();
    }
}
