using System.Globalization;
using System.Net;

namespace FlushBatching.Tcp;

/// <summary>
/// The errors of a connection that did not set up within <see cref="ConnectionSettings.ConnectTimeout"/>, or at all, or
/// did not close within <see cref="ConnectionSettings.CloseTimeout"/>, worded once for both I/O stacks (the core's
/// sockets and FlushBatching.Akka's DotNetty), each naming the key. Numbers are written culture-invariant: a log line
/// reads the same on every machine.
/// </summary>
internal static class SetupTimeouts
{
    /// <summary>How these errors name an accepted connection: from its peer to the listener, as <see cref="PeerEndPoints"/> names them.</summary>
    public static string Inbound(EndPoint? remote, EndPoint? listening) =>
        $"from {PeerEndPoints.Describe(remote)} to {PeerEndPoints.Describe(listening)}";

    /// <summary>An accepted connection that failed while it was set up (its handshake refused, its peer gone), not at its bound.</summary>
    /// <param name="connection">The connection as <see cref="Inbound"/> names it.</param>
    /// <param name="cause">What ended the set-up.</param>
    public static IOException Dropped(string connection, Exception cause) =>
        new($"The connection {connection} was dropped while setting up: {cause.Message}", cause);

    /// <summary>An outbound connection that did not connect, TLS handshake included, within the bound.</summary>
    public static TimeoutException Connecting(EndPoint remote, TimeSpan bound, Exception inner) =>
        new($"Connecting to {remote} timed out after {SettingText.FormatDuration(bound)} ({SettingKeys.ConnectTimeout}).", inner);

    /// <summary>An accepted connection whose peer did not finish its TLS handshake within the bound.</summary>
    /// <param name="connection">The connection as text naming both ends.</param>
    /// <param name="bound">The connect timeout that passed.</param>
    /// <param name="inner">The cancellation or timeout that ended the wait.</param>
    public static TimeoutException Handshake(string connection, TimeSpan bound, Exception inner) =>
        new($"The connection {connection} did not finish its TLS handshake within {SettingText.FormatDuration(bound)} ({SettingKeys.ConnectTimeout}), and was closed.", inner);

    /// <summary>A close aborted at its bound with bytes the peer did not read.</summary>
    /// <param name="connection">The connection as text naming both ends.</param>
    /// <param name="bound">The close timeout that passed.</param>
    /// <param name="unsent">The bytes left unsent.</param>
    public static TimeoutException CloseAborted(string connection, TimeSpan bound, long unsent) =>
        new(string.Create(CultureInfo.InvariantCulture,
            $"The close of {connection} was aborted after {SettingText.FormatDuration(bound)} ({SettingKeys.CloseTimeout}) with {unsent:N0} bytes unsent: the peer did not read them."));
}
