namespace FlushBatching;

/// <summary>
/// The names of the core's settings, as a refusal (<see cref="InvalidSettingException"/>) reports them and as the Akka
/// adapter reads them from a transport section: one name per setting, whichever way it was set.
/// </summary>
/// <remarks>
/// Each is relative to the transport section, as Akka.Remote's <c>dot-netty.tcp</c> section spells it, except
/// <see cref="CloseTimeout"/>, which Akka.Remote keeps outside it. The batching keys are relative to the
/// <see cref="BatchingPrefix"/> block, the certificate keys to the adapter's <c>ssl</c> block.
/// </remarks>
internal static class SettingKeys
{
    /// <summary>The key of <see cref="Framing.FramingSettings.MaximumFrameSize"/>.</summary>
    internal const string MaximumFrameSize = "maximum-frame-size";

    /// <summary>The key of <see cref="Framing.FramingSettings.ByteOrder"/>.</summary>
    internal const string ByteOrder = "byte-order";

    /// <summary>The key of <see cref="Batching.BatchingSettings.Enabled"/>.</summary>
    internal const string Enabled = "enabled";

    /// <summary>The key of <see cref="Batching.BatchingSettings.MaxPendingWrites"/>.</summary>
    internal const string MaxPendingWrites = "max-pending-writes";

    /// <summary>The key of <see cref="Batching.BatchingSettings.MaxPendingBytes"/>.</summary>
    internal const string MaxPendingBytes = "max-pending-bytes";

    /// <summary>The key of <see cref="Batching.BatchingSettings.FlushInterval"/>.</summary>
    internal const string FlushInterval = "flush-interval";

    /// <summary>The key of <see cref="Tcp.ConnectionSettings.NoDelay"/>.</summary>
    internal const string NoDelay = "tcp-nodelay";

    /// <summary>The key of <see cref="Tcp.ConnectionSettings.KeepAlive"/>.</summary>
    internal const string KeepAlive = "tcp-keepalive";

    /// <summary>The key of <see cref="Tcp.ConnectionSettings.SendBufferSize"/>.</summary>
    internal const string SendBufferSize = "send-buffer-size";

    /// <summary>The key of <see cref="Tcp.ConnectionSettings.ReceiveBufferSize"/>.</summary>
    internal const string ReceiveBufferSize = "receive-buffer-size";

    /// <summary>The key of <see cref="Tcp.ConnectionSettings.Backlog"/>.</summary>
    internal const string Backlog = "backlog";
    internal const string MaxInboundConnections = "max-inbound-connections";

    /// <summary>The key of <see cref="Tcp.ConnectionSettings.ConnectTimeout"/>.</summary>
    internal const string ConnectTimeout = "connection-timeout";

    /// <summary>
    /// The key of <see cref="Tcp.ConnectionSettings.CloseTimeout"/>: Akka.Remote's own <c>akka.remote.flush-wait-on-shutdown</c>, the time Akka
    /// gives an endpoint to flush before it stops.
    /// </summary>
    internal const string CloseTimeout = "akka.remote.flush-wait-on-shutdown";

    /// <summary>The key of <see cref="Tcp.ConnectionSettings.WriteBufferHighWaterMark"/>.</summary>
    internal const string HighWaterMark = "write-buffer-high-water-mark";

    /// <summary>The key of <see cref="Tcp.ConnectionSettings.WriteBufferLowWaterMark"/>.</summary>
    internal const string LowWaterMark = "write-buffer-low-water-mark";

    /// <summary>The Akka adapter's choice of event loops for the DotNetty stack: <c>thread-pool</c> or <c>dedicated</c>.</summary>
    internal const string EventLoop = "event-loop";

    /// <summary>The prefix of the batching keys in a transport section, such as <c>batching.max-pending-writes</c>.</summary>
    internal const string BatchingPrefix = "batching.";

    /// <summary>The file a certificate is loaded from.</summary>
    internal const string CertificatePath = "certificate.path";

    /// <summary>The certificate store a certificate is looked up in.</summary>
    internal const string CertificateStoreName = "certificate.store-name";

    /// <summary>The thumbprint a certificate is looked up by.</summary>
    internal const string CertificateThumbprint = "certificate.thumbprint";
}
