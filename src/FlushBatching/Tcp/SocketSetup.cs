using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;

namespace FlushBatching.Tcp;

/// <summary>What the listener and the connector do alike to a new socket once its <see cref="SocketOptions"/> are set: TLS if configured.</summary>
internal static class SocketSetup
{
    /// <summary>Makes the connection's transport: the socket itself, or a TLS stream after the handshake.</summary>
    /// <exception cref="AuthenticationException">The handshake failed; when a certificate was refused, the message says why.</exception>
    public static async Task<ConnectionIo> CreateIoAsync(Socket socket, ConnectionSettings settings, string? serverName, CancellationToken cancellationToken)
    {
        var tls = settings.Tls;
        if (tls is null)
        {
            return new SocketConnectionIo(socket);
        }

        var peer = socket.RemoteEndPoint?.ToString() ?? serverName ?? "the peer";
        var judge = new PeerJudge(tls);
        bool Validate(object sender, X509Certificate? certificate, X509Chain? chain, SslPolicyErrors errors) => judge.Accepts(certificate, chain, errors, peer);

        var stream = new SslStream(new NetworkStream(socket, ownsSocket: false), leaveInnerStreamOpen: false);
        try
        {
            if (serverName is null)
            {
                await stream.AuthenticateAsServerAsync(
                    new SslServerAuthenticationOptions
                    {
                        ServerCertificate = tls.Certificate ?? throw new InvalidOperationException("A TLS listener needs TlsSettings.Certificate, with its private key."),
                        ClientCertificateRequired = tls.RequireMutualAuthentication,
                        RemoteCertificateValidationCallback = tls.RequireMutualAuthentication ? Validate : static (_, _, _, _) => true,
                        EnabledSslProtocols = tls.Protocols,
                        CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
                    },
                    cancellationToken).ConfigureAwait(false);
            }
            else
            {
                var own = tls.ClientCertificate;
                await stream.AuthenticateAsClientAsync(
                    new SslClientAuthenticationOptions
                    {
                        TargetHost = tls.TargetHostFor(serverName),
                        EnabledSslProtocols = tls.Protocols,
                        CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
                        RemoteCertificateValidationCallback = Validate,
                        LocalCertificateSelectionCallback = own is null ? null : (_, _, _, _, _) => own,
                    },
                    cancellationToken).ConfigureAwait(false);
            }
        }
        catch (AuthenticationException e)
        {
            await stream.DisposeAsync().ConfigureAwait(false);
            var explained = judge.Explain(e);
            if (explained == e)
            {
                throw;
            }

            throw explained;
        }
        catch
        {
            await stream.DisposeAsync().ConfigureAwait(false);
            throw;
        }

        return new TlsConnectionIo(socket, stream, settings);
    }
}
