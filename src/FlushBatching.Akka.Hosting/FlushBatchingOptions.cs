using System.Globalization;
using System.Text;
using Akka.Configuration;
using FlushBatching.Akka.DotNettyStack;
using FlushBatching.Batching;
using FlushBatching.Framing;
using FlushBatching.Tcp;

namespace FlushBatching.Akka.Hosting;

/// <summary>
/// The FlushBatching transport's options for <see cref="AkkaFlushBatchingHostingExtensions.WithFlushBatching(global::Akka.Hosting.AkkaConfigurationBuilder, FlushBatchingOptions)"/>,
/// shaped like Akka.Remote.Hosting's <c>RemoteOptions</c>: a property left <c>null</c> writes nothing, so the value
/// comes from the rest of the configuration or the transport's default.
/// </summary>
/// <remarks>
/// Each property is a key of <c>akka.remote.dot-netty.tcp</c>, named in its summary; docs/configuration.md says
/// what each does and how to tune it. Binds from an <c>IConfiguration</c> section (appsettings.json), passed to
/// <c>WithFlushBatching(section)</c>: sizes as numbers of bytes, <see cref="FlushInterval"/> as a
/// <see cref="TimeSpan"/> such as <c>"00:00:00.040"</c>, enums by name. Host, port and TLS stay with
/// <c>WithRemoting</c>, which writes the same section.
/// </remarks>
public sealed class FlushBatchingOptions
{
    /// <summary>The section both <c>WithRemoting</c> and these options write.</summary>
    internal const string Section = "akka.remote.dot-netty.tcp";

    /// <summary>The key that names the transport's class.</summary>
    internal const string TransportClassKey = "transport-class";

    /// <summary>
    /// Whether the node runs FlushBatching: when not set or <c>true</c>, <c>WithFlushBatching</c> switches the node
    /// over; <c>false</c> checks the other options and writes nothing, so the node keeps the transport the rest of its
    /// configuration names (stock's, unless a <c>transport-class</c> says otherwise). Bound from appsettings.json
    /// (<c>"FlushBatching": { "Enabled": false }</c>), it switches a node over, or back, with no change to its code.
    /// </summary>
    public bool? Enabled { get; set; }

    /// <summary>The I/O stack: <see cref="TransportStack.Sockets"/> when not set.</summary>
    public TransportStack? Transport { get; set; }

    /// <summary>
    /// <c>event-loop</c>: what runs the DotNetty stack's event loops. <see cref="DotNettyEventLoop.ThreadPool"/> when not
    /// set; only <see cref="TransportStack.DotNetty"/> reads it.
    /// </summary>
    public DotNettyEventLoop? EventLoop { get; set; }

    /// <summary><c>batching.enabled</c>: off sends every message by itself.</summary>
    public bool? BatchingEnabled { get; set; }

    /// <summary><c>batching.max-pending-writes</c>: flush once this many messages are pending (1 to 65536).</summary>
    public int? MaxPendingWrites { get; set; }

    /// <summary><c>batching.max-pending-bytes</c>: flush once this many bytes are pending (1 to 64 MiB).</summary>
    public long? MaxPendingBytes { get; set; }

    /// <summary><c>batching.flush-interval</c>: the longest the oldest pending message waits while a burst goes on.</summary>
    public TimeSpan? FlushInterval { get; set; }

    /// <summary>
    /// <c>write-buffer-high-water-mark</c>: bytes queued on a connection above which writes are refused. Unset, each
    /// connection's mark starts at eight maximum-size frames and follows its drain rate up to four times that; set, it is
    /// fixed.
    /// </summary>
    public long? WriteBufferHighWaterMark { get; set; }

    /// <summary><c>write-buffer-low-water-mark</c>: bytes queued below which refused writes are taken again.</summary>
    public long? WriteBufferLowWaterMark { get; set; }

    /// <summary><c>byte-order</c> of the length prefix; equal on every node.</summary>
    public ByteOrder? ByteOrder { get; set; }

    /// <summary>
    /// The configuration these options write, after checking each value as the transport does at start. A value whose
    /// limit depends on a key these options do not write (a low-water mark set without a high one is judged against the
    /// node's high mark, which follows <c>maximum-frame-size</c> from HOCON or <c>RemoteOptions</c>) is checked here only
    /// on its own, and against the node's whole section when the transport starts: what HOCON accepts, these accept.
    /// </summary>
    /// <exception cref="InvalidSettingException">A value is not allowed; the message names the key as HOCON writes it.</exception>
    internal Config ToConfig()
    {
        var values = Values();
        List<(string Key, string Value)> check = WriteBufferLowWaterMark is not null && WriteBufferHighWaterMark is null
            ? [.. values, (SettingKeys.HighWaterMark, Size(ConnectionSettings.MaxWriteBufferWaterMark)!)]
            : values;
        FlushBatchingTransport.Validate(Parse(check).GetConfig(Section));
        return Parse(values);
    }

    private static Config Parse(List<(string Key, string Value)> values)
    {
        var hocon = new StringBuilder(Section).Append(" {\n");
        foreach (var (key, value) in values)
        {
            hocon.Append("  ").Append(key).Append(" = \"").Append(value).Append("\"\n");
        }

        return ConfigurationFactory.ParseString(hocon.Append('}').ToString());
    }

    private List<(string Key, string Value)> Values()
    {
        var transport = Transport switch
        {
            null or TransportStack.Sockets => typeof(BatchingTcpTransport),
            TransportStack.DotNetty => typeof(DotNettyBatchingTransport),
            var other => throw new InvalidSettingException(TransportClassKey, other.ToString()!, "Sockets or DotNetty"),
        };
        var values = new List<(string, string)> { (TransportClassKey, $"{transport.FullName}, {transport.Assembly.GetName().Name}") };
        void Add(string key, string? value)
        {
            if (value is not null)
            {
                values.Add((key, value));
            }
        }

        Add(SettingKeys.BatchingPrefix + SettingKeys.Enabled, BatchingEnabled switch { null => null, true => "on", false => "off" });
        Add(SettingKeys.BatchingPrefix + SettingKeys.MaxPendingWrites, MaxPendingWrites?.ToString(CultureInfo.InvariantCulture));
        Add(SettingKeys.BatchingPrefix + SettingKeys.MaxPendingBytes, Size(MaxPendingBytes));
        Add(SettingKeys.BatchingPrefix + SettingKeys.FlushInterval, FlushInterval is { } interval ? SettingText.FormatDuration(interval) : null);
        Add(SettingKeys.HighWaterMark, Size(WriteBufferHighWaterMark));
        Add(SettingKeys.LowWaterMark, Size(WriteBufferLowWaterMark));
        Add(SettingKeys.EventLoop, EventLoop switch
        {
            null => null,
            DotNettyEventLoop.ThreadPool => EventLoopKindNames.ThreadPool,
            DotNettyEventLoop.Dedicated => EventLoopKindNames.Dedicated,
            var other => throw new InvalidSettingException(SettingKeys.EventLoop, other.ToString()!, "ThreadPool or Dedicated"),
        });
        Add(SettingKeys.ByteOrder, ByteOrder switch
        {
            null => null,
            Framing.ByteOrder.LittleEndian => "little-endian",
            Framing.ByteOrder.BigEndian => "big-endian",
            var other => throw new InvalidSettingException(SettingKeys.ByteOrder, other.ToString()!, "LittleEndian or BigEndian"),
        });
        return values;
    }

    private static string? Size(long? bytes) => bytes is { } b ? b.ToString(CultureInfo.InvariantCulture) + "b" : null;
}
