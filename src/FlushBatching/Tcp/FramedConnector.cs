using System.Net;
using System.Net.Sockets;
using System.Security.Authentication;
using FlushBatching.Tcp.Io;

namespace FlushBatching.Tcp;

/// <summary>Opens framed connections, TLS handshake included, within <see cref="ConnectionSettings.ConnectTimeout"/>.</summary>
public static class FramedConnector
{
    /// <summary>Connects to <paramref name="remote"/>.</summary>
    /// <exception cref="TimeoutException">Connecting took longer than <see cref="ConnectionSettings.ConnectTimeout"/>.</exception>
    /// <exception cref="IOException">The connection was refused or failed; the message names the endpoint.</exception>
    /// <exception cref="AuthenticationException">The TLS handshake failed, such as on a certificate that does not validate.</exception>
    public static Task<FramedConnection> ConnectAsync(IPEndPoint remote, ConnectionSettings settings, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(remote);
        return ConnectAsync(remote, remote.Address.ToString(), settings, cancellationToken);
    }

    /// <summary>
    /// Connects to <paramref name="host"/> (a name or an address) on <paramref name="port"/>: a name is resolved, and
    /// its addresses are tried in turn, each within <see cref="ConnectionSettings.ConnectTimeout"/>, until one connects.
    /// </summary>
    /// <inheritdoc cref="ConnectAsync(IPEndPoint, ConnectionSettings, CancellationToken)"/>
    public static async Task<FramedConnection> ConnectAsync(string host, int port, ConnectionSettings settings, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(host);
        ArgumentNullException.ThrowIfNull(settings);
        if (IPAddress.TryParse(host, out var address))
        {
            return await ConnectAsync(new IPEndPoint(address, port), host, settings, cancellationToken).ConfigureAwait(false);
        }

        // Resolved here, and each address connected with a socket of its own: on .NET 8 and 9 on Linux and macOS, a socket
        // whose options are set cannot connect by DnsEndPoint (the runtime's per-address copy of it throws
        // PlatformNotSupportedException), and every socket here has its options set before it connects.
        IPAddress[] addresses;
        using (var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken))
        {
            timeout.CancelAfter(settings.ConnectTimeout);
            try
            {
                addresses = await Dns.GetHostAddressesAsync(host, timeout.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException e) when (!cancellationToken.IsCancellationRequested)
            {
                throw SetupTimeouts.Connecting(new DnsEndPoint(host, port), settings.ConnectTimeout, e);
            }
            catch (SocketException e)
            {
                throw new IOException($"Connecting to {host}:{port} failed: the name did not resolve ({e.SocketErrorCode}: {e.Message}).", e);
            }
        }

        return addresses.Length == 0
            ? throw new IOException($"Connecting to {host}:{port} failed: the name resolved to no address.")
            : await ConnectToFirstAsync([.. addresses.Select(resolved => new IPEndPoint(resolved, port))], host, settings, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Connects to the first of <paramref name="endpoints"/> (at least one) that takes the connection, each within
    /// <see cref="ConnectionSettings.ConnectTimeout"/>: one that refuses, fails or never answers in time (a black-holed
    /// address, such as an unreachable AAAA) moves on to the next, and the last one's failure is thrown. A failed TLS
    /// handshake is thrown at once: that peer answered, and refused. The caller's cancellation ends it at once.
    /// </summary>
    internal static async Task<FramedConnection> ConnectToFirstAsync(IReadOnlyList<IPEndPoint> endpoints, string host, ConnectionSettings settings, CancellationToken cancellationToken)
    {
        for (var i = 0; ; i++)
        {
            try
            {
                return await ConnectAsync(endpoints[i], host, settings, cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when ((e is IOException or TimeoutException) && i < endpoints.Count - 1)
            {
                // The next address.
            }
        }
    }

    private static async Task<FramedConnection> ConnectAsync(EndPoint remote, string host, ConnectionSettings settings, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(settings);
        var socket = remote.AddressFamily == AddressFamily.Unspecified
            ? new Socket(SocketType.Stream, ProtocolType.Tcp)
            : new Socket(remote.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        if (socket.AddressFamily == AddressFamily.InterNetworkV6)
        {
            socket.DualMode = true;
        }

        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(settings.ConnectTimeout);
        try
        {
            SocketOptions.Of(settings).ApplyTo(socket);
            await socket.ConnectAsync(remote, timeout.Token).ConfigureAwait(false);
            var io = await SocketSetup.CreateIoAsync(socket, settings, host, timeout.Token).ConfigureAwait(false);
            return FramedConnection.Open(socket, io, settings);
        }
        catch (OperationCanceledException e) when (!cancellationToken.IsCancellationRequested)
        {
            socket.Dispose();
            throw SetupTimeouts.Connecting(remote, settings.ConnectTimeout, e);
        }
        catch (SocketException e)
        {
            socket.Dispose();
            throw new IOException($"Connecting to {remote} failed: {e.SocketErrorCode} ({e.Message}).", e);
        }
        catch (AuthenticationException e)
        {
            socket.Dispose();
            throw new AuthenticationException($"The TLS handshake with {remote} failed: {e.Message}", e);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }
}
