using System.Globalization;

namespace FlushBatching.Akka.Tests.Support;

/// <summary>
/// This process's TCP sockets, read from Linux's <c>/proc</c>: a socket counts while this process holds a descriptor
/// for it, so a socket closed here stops counting at once, whatever state TCP keeps it in afterwards.
/// </summary>
public static class ProcessSockets
{
    /// <summary>How many sockets this process holds whose remote end is <paramref name="port"/> (IPv4 and IPv6).</summary>
    public static int ConnectedTo(int port) => To(port).Count();

    /// <summary>
    /// Whether this process holds the socket from <paramref name="localPort"/> to <paramref name="remotePort"/>: one
    /// connection, where <see cref="ConnectedTo"/> also counts any other socket still held whose peer used that port, such
    /// as an earlier test's accepted socket whose client's closed port the kernel gave the test's listener since.
    /// </summary>
    public static bool Holds(int localPort, int remotePort) =>
        Rows().Any(fields => LocalPort(fields[1]) == localPort && RemotePort(fields[2]) == remotePort);

    /// <summary>The bytes waiting in the send queues of this process's sockets to <paramref name="port"/>, unread by the peer.</summary>
    public static long QueuedTo(int port) => To(port).Sum(fields =>
        long.Parse(fields[4][..fields[4].IndexOf(':')], NumberStyles.HexNumber, CultureInfo.InvariantCulture));

    /// <summary>Whether this process holds a listening socket on <paramref name="port"/>.</summary>
    public static bool ListeningOn(int port) => Rows().Any(fields => LocalPort(fields[1]) == port && fields[3] == "0A");

    /// <summary>
    /// Whether the kernel never finished accepting the connection from <paramref name="peerPort"/>: its other end on
    /// this machine is at most a request in SYN_RECV, or already gone. The peer saw its connect succeed, but no socket
    /// exists at this end for any process to hold, accept or close.
    /// </summary>
    public static bool NeverAccepted(int peerPort) =>
        AllRows().Where(fields => RemotePort(fields[2]) == peerPort).All(fields => fields[3] == "03" && fields[9] == "0");

    /// <summary>
    /// Every TCP socket on this machine (in this network namespace) with <paramref name="port"/> at either end, held
    /// here or not (queued for accept, orphaned, half-open request), as "local remote state inode" lines: for failure
    /// messages, to tell which end still holds a connection.
    /// </summary>
    public static string Describe(int port) => string.Join("; ", AllRows()
        .Where(fields => LocalPort(fields[1]) == port || RemotePort(fields[2]) == port)
        .Select(fields => $"{Endpoint(fields[1])} {Endpoint(fields[2])} {fields[3]} inode {fields[9]}"));

    // The /proc/net/tcp rows (local, remote, state, tx_queue:rx_queue, ..., inode) of sockets this process holds.
    private static IEnumerable<string[]> To(int port) => Rows().Where(fields => RemotePort(fields[2]) == port).ToList();

    private static IEnumerable<string[]> Rows()
    {
        var held = new HashSet<string>(
            new DirectoryInfo("/proc/self/fd").EnumerateFileSystemInfos()
                .Select(fd => fd.LinkTarget)
                .Where(target => target?.StartsWith("socket:[", StringComparison.Ordinal) == true)
                .Select(target => target!["socket:[".Length..^1]));
        return AllRows().Where(fields => held.Contains(fields[9])).ToList();
    }

    private static List<string[]> AllRows() => new[] { "/proc/self/net/tcp", "/proc/self/net/tcp6" }
        .Where(File.Exists)
        .SelectMany(File.ReadLines)
        .Select(line => line.Split(' ', StringSplitOptions.RemoveEmptyEntries))
        .Where(fields => fields.Length > 9 && fields[2].Contains(':'))
        .ToList();

    private static string Endpoint(string address) => $":{RemotePort(address)}";

    private static int LocalPort(string address) => RemotePort(address);

    private static int RemotePort(string address) =>
        int.TryParse(address[(address.LastIndexOf(':') + 1)..], NumberStyles.HexNumber, CultureInfo.InvariantCulture, out var port) ? port : -1;
}
