using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace FlushBatching.Tcp.Tls;

/// <summary>
/// What each end of a TLS handshake is given, decided once from <see cref="TlsSettings"/> for both connection stacks:
/// the certificates, whether the client must show one, the protocols, no revocation check, the host name to check, and
/// the peer judged by a <see cref="PeerJudge"/>. The sockets stack hands these options to <see cref="SslStream"/>; the
/// DotNetty stack maps the same fields to its TLS handler's settings.
/// </summary>
internal static class TlsHandshake
{
    /// <summary>
    /// Why a client's handshake failed when the server closed the connection before it completed. A server that refuses
    /// this node's protocol versions or certificate sends its alert and closes, and the client may see only the close;
    /// either way the handshake failed, and both stacks say so in these words.
    /// </summary>
    public const string PeerClosedDuringHandshake =
        "the peer closed the connection during the handshake (it may not accept this node's TLS protocol versions or certificate)";

    /// <param name="tls">The listener's TLS settings, with its certificate.</param>
    /// <param name="judge">Judges a client's certificate when one is required.</param>
    /// <param name="peer">Names the peer in a refusal; read only when a certificate is judged.</param>
    /// <exception cref="InvalidOperationException">The settings have no certificate of the listener's own.</exception>
    public static SslServerAuthenticationOptions ServerOptions(TlsSettings tls, PeerJudge judge, Func<string> peer) => new()
    {
        ServerCertificate = tls.Certificate ?? throw new InvalidOperationException("A TLS listener needs TlsSettings.Certificate, with its private key."),
        ClientCertificateRequired = tls.RequireMutualAuthentication,
        RemoteCertificateValidationCallback = tls.RequireMutualAuthentication
            ? (_, certificate, chain, errors) => judge.Accepts(certificate, chain, errors, peer())
            : static (_, _, _, _) => true,
        EnabledSslProtocols = tls.Protocols,
        CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
    };

    /// <param name="tls">The connector's TLS settings.</param>
    /// <param name="judge">Judges the server's certificate.</param>
    /// <param name="peer">Names the peer in a refusal; read only when a certificate is judged.</param>
    /// <param name="connectedHost">The host connected to: the name checked unless the settings give a target host.</param>
    public static SslClientAuthenticationOptions ClientOptions(TlsSettings tls, PeerJudge judge, Func<string> peer, string connectedHost)
    {
        var own = tls.ClientCertificate;
        return new SslClientAuthenticationOptions
        {
            TargetHost = tls.TargetHostFor(connectedHost),
            EnabledSslProtocols = tls.Protocols,
            CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
            RemoteCertificateValidationCallback = (_, certificate, chain, errors) => judge.Accepts(certificate, chain, errors, peer()),
            // Offered whatever issuers the server names: a selection callback, not only a list .NET would filter.
            ClientCertificates = own is null ? null : new X509CertificateCollection { own },
            LocalCertificateSelectionCallback = own is null ? null : (_, _, _, _, _) => own,
        };
    }
}
