using System.Net;
using System.Net.Sockets;
using Akka.Actor;
using Akka.Remote.Transport;

namespace FlushBatching.Akka;

/// <summary>
/// How a transport names and finds Akka addresses: the host and port it binds and the ones it publishes (from
/// <c>hostname</c>, <c>port</c>, <c>public-hostname</c>, <c>public-port</c>), the Akka address of each connection's ends
/// as stock names them, and the endpoint behind a remote address (DNS, IPv4 unless <c>dns-use-ipv6</c>). Read from the
/// section once, with the rest of <see cref="BatchingTransportSettings"/>; the same on every stack.
/// </summary>
internal sealed record AkkaAddressing
{
    /// <summary>The host to bind to; <c>0.0.0.0</c> when the key is empty.</summary>
    public required string Hostname { get; init; }

    /// <summary>The host other nodes reach this one by: <see cref="Hostname"/> when the key is empty.</summary>
    public required string PublicHostname { get; init; }

    /// <summary>The port to bind to; 0 lets the system choose.</summary>
    public required int Port { get; init; }

    /// <summary>The port other nodes reach this one by, or <c>null</c> for the bound port.</summary>
    public required int? PublicPort { get; init; }

    /// <summary>Whether host names resolve to IPv6 addresses rather than IPv4.</summary>
    public required bool DnsUseIpv6 { get; init; }

    /// <summary>This transport's address as configured, before it binds (port 0 when the system will choose).</summary>
    public Address Configured(string scheme, string systemName) =>
        new(scheme, systemName, AddressHost(PublicHostname), PublicPort ?? Port);

    /// <summary>The endpoint to bind: <see cref="Hostname"/> resolved, and <see cref="Port"/>.</summary>
    /// <exception cref="SocketException">The host name does not resolve.</exception>
    public Task<IPEndPoint> BindEndPointAsync() => ResolveAsync(Hostname, Port);

    /// <summary>The host name a TLS client expects in the certificate of <paramref name="remote"/>: its host, without IPv6 brackets.</summary>
    public static string TargetHost(Address remote) => (remote.Host ?? "").Trim('[', ']');

    /// <summary>The bound address as Akka names it: the public host and port where given.</summary>
    public Address ListenAddress(string scheme, string systemName, IPEndPoint bound) =>
        new(scheme, systemName, AddressHost(PublicHostname), PublicPort ?? bound.Port);

    /// <summary>A connection's local address as Akka's handles name it: the bind host with the socket's port.</summary>
    public Address LocalAddress(string scheme, string systemName, IPEndPoint local) =>
        new(scheme, systemName, AddressHost(Hostname), local.Port);

    /// <summary>The Akka address of an inbound connection's peer, as stock names it: this system's name, the peer's socket.</summary>
    public static Address PeerAddress(string scheme, string systemName, IPEndPoint peer) =>
        new(scheme, systemName, AddressHost(peer.Address), peer.Port);

    /// <summary>An IPv6 address in brackets, as Akka writes it in an address; a name as it is.</summary>
    public static string AddressHost(string host) =>
        IPAddress.TryParse(host, out var ip) ? AddressHost(ip) : host;

    /// <inheritdoc cref="AddressHost(string)"/>
    public static string AddressHost(IPAddress ip) =>
        ip.AddressFamily == AddressFamily.InterNetworkV6 ? $"[{ip}]" : ip.ToString();

    // Resolves a host name (or parses an address) to an endpoint, IPv4 unless dns-use-ipv6; throws a SocketException
    // when the name does not resolve to an address of that family.
    private async Task<IPEndPoint> ResolveAsync(string host, int port)
    {
        if (IPAddress.TryParse(host.Trim('[', ']'), out var ip))
        {
            return new IPEndPoint(ip, port);
        }

        var family = DnsUseIpv6 ? AddressFamily.InterNetworkV6 : AddressFamily.InterNetwork;
        var addresses = await Dns.GetHostAddressesAsync(host, family).ConfigureAwait(false);
        return addresses.Length > 0 ? new IPEndPoint(addresses[^1], port) : throw new SocketException((int)SocketError.HostNotFound);
    }

    /// <summary>
    /// The endpoint to connect to for an Akka address. A peer that bound every address names itself 0.0.0.0 or [::]:
    /// like stock, reach it on this machine's loopback.
    /// </summary>
    /// <exception cref="InvalidAssociationException">The address has no host or port.</exception>
    /// <exception cref="SocketException">The host name does not resolve.</exception>
    public async Task<IPEndPoint> ConnectableEndPointAsync(Address remote)
    {
        if (remote.Port is not { } port || string.IsNullOrEmpty(remote.Host))
        {
            throw new InvalidAssociationException($"Cannot associate with {remote}: it has no host and port.");
        }

        var endpoint = await ResolveAsync(remote.Host, port).ConfigureAwait(false);
        return endpoint.Address.Equals(IPAddress.Any) ? new IPEndPoint(IPAddress.Loopback, port)
            : endpoint.Address.Equals(IPAddress.IPv6Any) ? new IPEndPoint(IPAddress.IPv6Loopback, port)
            : endpoint;
    }
}
