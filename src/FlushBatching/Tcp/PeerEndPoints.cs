using System.Net;

namespace FlushBatching.Tcp;

/// <summary>
/// The address a connection's ends are known by, on both stacks: in log lines, in metric tags, and in the Akka address
/// an inbound peer is given. A socket bound to <c>::</c> (dual mode) sees an IPv4 peer as an IPv4-mapped IPv6 address,
/// <c>::ffff:10.0.0.5</c>; it is named by its IPv4 address, as the peer names itself and as a node bound to
/// <c>0.0.0.0</c> names it.
/// </summary>
internal static class PeerEndPoints
{
    /// <summary><paramref name="endpoint"/>, with an IPv4-mapped IPv6 address as the IPv4 address it maps.</summary>
    public static IPEndPoint Of(EndPoint endpoint) =>
        endpoint is IPEndPoint { Address.IsIPv4MappedToIPv6: true } mapped
            ? new IPEndPoint(mapped.Address.MapToIPv4(), mapped.Port)
            : (IPEndPoint)endpoint;

    /// <summary>How a log line names a connection: its two ends, this side's first, each as <see cref="Describe(EndPoint?)"/> names it.</summary>
    public static string Describe(EndPoint? local, EndPoint? remote) => $"{Describe(local)} -> {Describe(remote)}";

    /// <summary>How a log line names <paramref name="endpoint"/>: as <see cref="Of"/> gives it, or "the peer" when unknown.</summary>
    public static string Describe(EndPoint? endpoint) => endpoint switch
    {
        IPEndPoint ip => Of(ip).ToString(),
        null => "the peer",
        _ => endpoint.ToString() ?? "the peer",
    };
}
