using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;

namespace FlushBatching.Akka.Tests.Support;

/// <summary>Which certificate a node presents to a new TLS connection, seen from a raw TLS client.</summary>
public static class TlsProbe
{
    /// <summary>
    /// The thumbprint of the certificate a new TLS connection to the node is served; <paramref name="clientCertificate"/>,
    /// if given, is presented so that a node with mutual authentication completes the handshake.
    /// </summary>
    public static async Task<string?> ServerCertificateOf(Node node, X509Certificate2? clientCertificate = null)
    {
        using var tcp = new TcpClient();
        await tcp.ConnectAsync(IPAddress.Loopback, node.Address.Port!.Value);
        string? served = null;
        await using var tls = new SslStream(tcp.GetStream(), false, (_, certificate, _, _) =>
        {
            served = certificate?.GetCertHashString();
            return true;
        });
        await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
        {
            TargetHost = "localhost",
            ClientCertificates = clientCertificate is null ? null : [clientCertificate],
            LocalCertificateSelectionCallback = clientCertificate is null ? null : (_, _, _, _, _) => clientCertificate,
        });
        return served;
    }
}
