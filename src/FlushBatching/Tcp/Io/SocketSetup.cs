using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using FlushBatching.Tcp.Tls;

namespace FlushBatching.Tcp.Io;

/// <summary>What the listener and the connector do alike to a new socket once its <see cref="SocketOptions"/> are set: TLS if configured.</summary>
internal static class SocketSetup
{
    /// <summary>Makes the connection's transport: the socket itself, or a TLS stream after the handshake.</summary>
    /// <exception cref="AuthenticationException">
    /// The handshake failed; when a certificate was refused, the message says why, and a client whose server closed the
    /// connection before the handshake completed is told that.
    /// </exception>
    public static async Task<ConnectionIo> CreateIoAsync(Socket socket, ConnectionSettings settings, string? serverName, CancellationToken cancellationToken)
    {
        var tls = settings.Tls;
        if (tls is null)
        {
            return new SocketConnectionIo(socket);
        }

        var peer = socket.RemoteEndPoint is { } remote ? PeerEndPoints.Describe(remote) : serverName ?? "the peer";
        var judge = new PeerJudge(tls);
        var stream = new SslStream(new NetworkStream(socket, ownsSocket: false), leaveInnerStreamOpen: false);
        try
        {
            var handshake = serverName is null
                ? stream.AuthenticateAsServerAsync(TlsHandshake.ServerOptions(tls, judge, () => peer), cancellationToken)
                : stream.AuthenticateAsClientAsync(TlsHandshake.ClientOptions(tls, judge, () => peer, serverName), cancellationToken);
            await handshake.ConfigureAwait(false);
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
        catch (IOException closed) when (serverName is not null)
        {
            // SslStream reads a refusing server's alert when it arrives before the close, but a server that closes
            // first (or resets) ends the handshake with an IOException: still a failed handshake, said as one.
            await stream.DisposeAsync().ConfigureAwait(false);
            throw new AuthenticationException(TlsHandshake.PeerClosedDuringHandshake, closed);
        }
        catch
        {
            await stream.DisposeAsync().ConfigureAwait(false);
            throw;
        }

        return new TlsConnectionIo(socket, stream, settings);
    }
}
