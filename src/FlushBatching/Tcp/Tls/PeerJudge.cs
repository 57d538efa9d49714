using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;

namespace FlushBatching.Tcp.Tls;

/// <summary>
/// Judges the certificate a peer presents in one TLS handshake by <see cref="TlsSettings.Judge"/>, and keeps the reason
/// of a refusal so that the handshake's failure says why. The one way both I/O stacks (the core's sockets and
/// FlushBatching.Akka's DotNetty) judge peers; one instance per handshake.
/// </summary>
internal sealed class PeerJudge
{
    private readonly TlsSettings _tls;
    private string? _refusal;

    public PeerJudge(TlsSettings tls) => _tls = tls;

    /// <summary>Judges what <paramref name="peer"/> presented; <c>false</c> refuses it and keeps the reason.</summary>
    public bool Accepts(X509Certificate? certificate, X509Chain? chain, SslPolicyErrors errors, string peer)
    {
        _refusal = _tls.Judge(certificate, chain, errors, peer);
        return _refusal is null;
    }

    /// <summary>The handshake's failure, as an <see cref="AuthenticationException"/> naming the refusal when there was one.</summary>
    public Exception Explain(Exception failure) => _refusal is null ? failure : new AuthenticationException(_refusal, failure);
}
