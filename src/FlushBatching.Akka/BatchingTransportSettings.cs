using System.Net;
using System.Net.Sockets;
using Akka.Actor;
using Akka.Configuration;
using Akka.Event;
using Akka.Remote.Transport;
using Akka.Remote.Transport.DotNetty;
using FlushBatching.Akka.DotNettyStack;
using FlushBatching.Batching;
using FlushBatching.Diagnostics;
using FlushBatching.Framing;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Admission;

namespace FlushBatching.Akka;

/// <summary>
/// A FlushBatching transport's settings, read once from its HOCON section with the package's
/// <c>reference.conf</c> as fallback, and validated here: a bad value throws <see cref="InvalidSettingException"/>
/// naming the key, the value and what is allowed.
/// </summary>
internal sealed record BatchingTransportSettings
{
    /// <summary>The package's <c>reference.conf</c>: every key of a transport section, with its default.</summary>
    internal static Config Reference { get; } = LoadReference();

    /// <summary>The hosts and ports this transport binds and publishes, and how it names and finds Akka addresses.</summary>
    public required AkkaAddressing Addressing { get; init; }

    /// <summary>The core engine's settings: socket options, framing, batching, back-pressure and TLS.</summary>
    public required ConnectionSettings Connection { get; init; }

    public bool EnableSsl => Connection.Tls is not null;

    /// <summary>Event loops for accepted connections, from <c>server-socket-worker-pool</c>, for a stack that has threads of its own.</summary>
    public required int ServerWorkerPoolSize { get; init; }

    /// <summary>Event loops for outbound connections, from <c>client-socket-worker-pool</c>, for a stack that has threads of its own.</summary>
    public required int ClientWorkerPoolSize { get; init; }

    /// <summary>What runs the DotNetty stack's event loops, from <c>event-loop</c>; the sockets stack has none.</summary>
    public required EventLoopKind EventLoop { get; init; }

    /// <summary><c>tcp</c>, or <c>ssl.tcp</c> with TLS: Akka prefixes <c>akka.</c>, so addresses read <c>akka.tcp://system@host:port</c>.</summary>
    public string SchemeIdentifier => EnableSsl ? "ssl.tcp" : "tcp";

    /// <summary>
    /// Reads a transport's section for <paramref name="system"/>, with its <see cref="DotNettySslSetup"/> if any, and
    /// bounds every close by the system's <c>akka.remote.flush-wait-on-shutdown</c>: the time Akka.Remote gives an
    /// endpoint to flush is the time a closing connection gets to send what is queued.
    /// </summary>
    public static BatchingTransportSettings Create(ActorSystem system, Config section)
    {
        var sslSetup = system.Settings.Setup.Get<DotNettySslSetup>();
        var log = Logging.GetLogger(system, typeof(BatchingTransportSettings));
        var settings = Create(section, sslSetup.HasValue ? sslSetup.Value : null, log);
        var flushWait = system.Settings.Config.GetTimeSpan(SettingKeys.CloseTimeout, ConnectionSettings.DefaultCloseTimeout, allowInfinite: false);
        if (flushWait > ConnectionSettings.CloseTimeoutLimit)
        {
            // Stock starts with any duration here; a close past the hour is corrected to it, as other values stock starts with are.
            log.Warning("FlushBatching transport: '{0} = {1}' is taken as {2}: a close waits for its peer to read at most that long",
                SettingKeys.CloseTimeout, SettingText.FormatDuration(flushWait), SettingText.FormatDuration(ConnectionSettings.CloseTimeoutLimit));
            flushWait = ConnectionSettings.CloseTimeoutLimit;
        }

        return settings with { Connection = settings.Connection.WithCloseTimeout(flushWait) };
    }

    /// <summary>Reads <paramref name="section"/> (the transport's own config section) over <see cref="Reference"/>.</summary>
    /// <param name="section">The section Akka.Remote hands the transport.</param>
    /// <param name="sslSetup">TLS given in code through <see cref="DotNettySslSetup"/>; as in stock, it takes the place of the section's <c>ssl</c> keys.</param>
    /// <param name="log">Where a warning about the settings goes, and the logger a custom certificate validator is given.</param>
    /// <param name="strict">Refuse, rather than correct with a WARNING, a value stock starts with that has no meaning here.</param>
    public static BatchingTransportSettings Create(Config section, DotNettySslSetup? sslSetup = null, ILoggingAdapter? log = null, bool strict = false)
    {
        if (log is not null && section is not null)
        {
            WarnAboutMisplacedBatchingKeys(section, log);
            WarnAboutStockOnlyKeys(section, log);
        }

        var read = new SectionReader((section ?? Config.Empty).WithFallback(Reference));
        var stock = new StockValues(read, log, strict, section);
        var hostname = read.Text("hostname");
        if (string.IsNullOrWhiteSpace(hostname))
        {
            hostname = IPAddress.Any.ToString();
        }

        var publicHostname = read.Text("public-hostname");
        var publicPort = InRange(read, "public-port", stock.WholeFromZero("public-port", "stock takes a public-port below 1 as none, so port applies"), 0, 65535);
        var connection = read.Apply(() => WithWaterMarks(stock, ConnectionSettings.Default
            .WithNoDelay(read.Boolean(SettingKeys.NoDelay))
            .WithKeepAlive(read.Boolean(SettingKeys.KeepAlive))
            .WithSendBufferSize(stock.BufferSize(SettingKeys.SendBufferSize))
            .WithReceiveBufferSize(stock.BufferSize(SettingKeys.ReceiveBufferSize))
            .WithBacklog(InRange(read, SettingKeys.Backlog,
                stock.WholeFromZero(SettingKeys.Backlog, "a listening socket's queue is a length from 0; stock's DotNetty refuses a negative one and keeps its default"), 0, int.MaxValue))
            .WithConnectTimeout(stock.Duration(SettingKeys.ConnectTimeout, ConnectionSettings.ConnectTimeoutLimit, stockReads: true))
            .WithMaxInboundConnections(MaxInboundConnections(read))
            .WithFraming(FramingSettings.Default
                .WithMaximumFrameSize(stock.FrameSize(SettingKeys.MaximumFrameSize))
                .WithByteOrder(ByteOrderOf(read.Text(SettingKeys.ByteOrder))))
            .WithBatching(BatchingSettings.Default
                .WithEnabled(read.Boolean(Batching(SettingKeys.Enabled)))
                .WithMaxPendingWrites(stock.MaxPendingWrites(Batching(SettingKeys.MaxPendingWrites), BatchingSettings.MaxPendingWritesLimit))
                .WithMaxPendingBytes(stock.UnreadSize(Batching(SettingKeys.MaxPendingBytes), BatchingSettings.MaxPendingBytesLimit))
                .WithFlushInterval(stock.Duration(Batching(SettingKeys.FlushInterval), BatchingSettings.FlushIntervalLimit, stockReads: false)))),
            SettingKeys.SendBufferSize, SettingKeys.ReceiveBufferSize, SettingKeys.Backlog,
            SettingKeys.ConnectTimeout, SettingKeys.HighWaterMark, SettingKeys.LowWaterMark,
            SettingKeys.MaximumFrameSize, Batching(SettingKeys.MaxPendingWrites),
            Batching(SettingKeys.MaxPendingBytes), Batching(SettingKeys.FlushInterval));

        if (read.Boolean("enable-ssl"))
        {
            connection = connection.WithTls(TlsSection.Read(read, sslSetup, log));
        }

        return new BatchingTransportSettings
        {
            Addressing = new AkkaAddressing
            {
                Hostname = hostname,
                PublicHostname = string.IsNullOrWhiteSpace(publicHostname) ? hostname : publicHostname,
                Port = InRange(read, "port", read.Whole("port"), 0, 65535),
                PublicPort = publicPort == 0 ? null : publicPort,
                DnsUseIpv6 = read.Boolean("dns-use-ipv6"),
            },
            Connection = connection,
            ServerWorkerPoolSize = stock.WorkerPoolSize("server-socket-worker-pool"),
            ClientWorkerPoolSize = stock.WorkerPoolSize("client-socket-worker-pool"),
            EventLoop = EventLoopKindNames.Parse(read.Text(SettingKeys.EventLoop)),
        };
    }

    /// <summary>A copy whose connections record on <paramref name="metrics"/>.</summary>
    public BatchingTransportSettings WithMetrics(FlushBatchingMetrics metrics) => this with { Connection = Connection.WithMetrics(metrics) };

    /// <summary>
    /// The settings for a connection to <paramref name="remote"/>: with TLS, the server's certificate is checked
    /// against the address's host, as stock does, whatever endpoint the host resolves to.
    /// </summary>
    public ConnectionSettings ConnectionTo(Address remote) =>
        Connection.Tls is { } tls ? Connection.WithTls(tls.WithTargetHost(AkkaAddressing.TargetHost(remote))) : Connection;

    /// <summary>The settings as one HOCON-like line, for the start-up log.</summary>
    public override string ToString() =>
        $"batching {{ {Connection.Batching} }}, {Connection.Framing}, " +
        $"write-buffer-high-water-mark = {SettingText.FormatSize(Connection.WriteBufferHighWaterMark)}" +
        (Connection.HighWaterMarkFollowsDrain ? $" (following the drain rate up to {SettingText.FormatSize(Connection.WriteBufferHighWaterMarkMost)}), " : ", ") +
        $"write-buffer-low-water-mark = {SettingText.FormatSize(Connection.WriteBufferLowWaterMark)}, " +
        (Connection.Tls is { } tls
            ? $"enable-ssl = on, ssl {{ require-mutual-authentication = {OnOff(tls.RequireMutualAuthentication)}, " +
              $"validate-certificate-hostname = {OnOff(tls.ValidateHostname)}, suppress-validation = {OnOff(tls.SuppressValidation)}" +
              $"{(tls.CertificateValidator is null ? "" : ", custom validator")} }}"
            : "enable-ssl = off");

    private static string OnOff(bool value) => value ? "on" : "off";

    // HOCON takes any key and the transport reads only those it knows, so a batching key one level too high, or misspelt
    // inside the section, would change nothing and say nothing. Each gets one WARNING naming it and where it belongs.
    private static void WarnAboutMisplacedBatchingKeys(Config section, ILoggingAdapter log)
    {
        string[] known = [SettingKeys.Enabled, SettingKeys.MaxPendingWrites, SettingKeys.MaxPendingBytes, SettingKeys.FlushInterval];
        foreach (var key in known.Where(key => section.HasPath(key)))
        {
            log.Warning("FlushBatching transport: '{0}' is written beside 'batching', where nothing reads it; it belongs inside it, as '{1}'",
                key, Batching(key));
        }

        if (!section.HasPath("batching") || section.GetValue("batching") is not { } batching || !batching.IsObject())
        {
            return;
        }

        foreach (var key in batching.GetObject().Items.Keys.Where(key => !known.Contains(key)))
        {
            log.Warning("FlushBatching transport: 'batching.{0}' is not a batching key and is ignored; the batching keys are {1}",
                key, string.Join(", ", known.Select(Batching)));
        }
    }

    // Keys stock 1.5.74 reads that neither stack uses: each with stock's default (Akka.Remote's reference.conf, or its
    // code for the last two) and what happens here instead. A value other than stock's default gets one WARNING naming
    // it, so that nobody counts on it; the node starts as it would have without it.
    private static readonly (string Key, string StockDefault, string Instead)[] StockOnlyKeys =
    [
        ("transport-protocol", "tcp", "both stacks speak TCP only"),
        ("enforce-ip-family", "off", "the address family follows hostname and dns-use-ipv6"),
        ("tcp-reuse-addr", "off-for-windows", ".NET's own choice at bind applies: on for TCP on Linux and macOS, off on Windows, as stock's default gives"),
        ("use-dispatcher-for-io", "", "I/O runs on the .NET thread pool or the DotNetty stack's event loops"),
        ("enable-backwards-compatibility", "off", "Helios framing is not spoken"),
        ("log-transport", "off", "there is no transport-level message log"),
        ("enable-pooling", "on", "the sockets stack always rents from ArrayPool<byte>.Shared, the DotNetty stack from the channel's allocator"),
    ];

    private static void WarnAboutStockOnlyKeys(Config section, ILoggingAdapter log)
    {
        foreach (var (key, stockDefault, instead) in StockOnlyKeys)
        {
            if (!section.HasPath(key) || section.GetValue(key) is not { } value || !value.IsString())
            {
                continue;
            }

            var text = value.GetString() ?? "";
            if (Normalized(text) != Normalized(stockDefault))
            {
                log.Warning("FlushBatching transport: '{0} = {1}' is read by the stock transport only and is ignored: {2}", key, text, instead);
            }
        }
    }

    // HOCON's spellings of a boolean as one, so that 'false' matches stock's 'off'.
    private static string Normalized(string text) => text.Trim().ToLowerInvariant() switch
    {
        "on" or "true" or "yes" => "on",
        "off" or "false" or "no" => "off",
        var other => other,
    };

    private static string Batching(string key) => SettingKeys.BatchingPrefix + key;

    private static ByteOrder ByteOrderOf(string text) => text.Trim().ToLowerInvariant() switch
    {
        "little-endian" => ByteOrder.LittleEndian,
        "big-endian" => ByteOrder.BigEndian,
        _ => throw new InvalidSettingException(SettingKeys.ByteOrder, text, "little-endian or big-endian"),
    };

    // 0b (Akka's own default for both keys, and this package's) leaves the core's default: eight maximum-size frames for
    // the high mark, half the high mark for the low one. A low mark at or above the high one would never accept writes
    // again; stock's DotNetty refuses it and keeps its own default low mark, so the default low mark applies here.
    private static ConnectionSettings WithWaterMarks(StockValues stock, ConnectionSettings framed)
    {
        var high = stock.WaterMark(SettingKeys.HighWaterMark);
        var low = stock.WaterMark(SettingKeys.LowWaterMark);
        var marked = framed.WithWriteBufferWaterMarksOrDefaults(high == 0 ? null : high, null);
        return low == 0 || low < marked.WriteBufferHighWaterMark || stock.Strict
            ? marked.WithWriteBufferWaterMarksOrDefaults(null, low == 0 ? null : low)
            : stock.Corrected(SettingKeys.LowWaterMark, marked, marked, $"half {SettingKeys.HighWaterMark} ({SettingText.FormatSize(marked.WriteBufferLowWaterMark)})",
                $"a low mark at or above the high one ({SettingText.FormatSize(marked.WriteBufferHighWaterMark)}) would never take writes again");
    }

    // auto (null: derived by each listener at its start), 0 or unbounded (none), or a bound that leaves the reserve free.
    private static int? MaxInboundConnections(SectionReader read)
    {
        const string key = SettingKeys.MaxInboundConnections;
        var text = read.Text(key).Trim().ToLowerInvariant();
        if (text is "auto" or "")
        {
            return null;
        }

        if (text is "unbounded" or "0")
        {
            return 0;
        }

        var limit = DescriptorBudget.ProcessLimit();
        var most = limit is { } l ? Math.Max(1, l - DescriptorBudget.Reserve(l)) : int.MaxValue;
        var allowed = limit is { } known
            ? $"auto, unbounded, 0, or a whole number from 1 to {most} (this process's descriptor limit of {known} less a reserve of {DescriptorBudget.Reserve(known)})"
            : "auto, unbounded, 0, or a whole number from 1";
        return long.TryParse(text, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var bound) && bound >= 1 && bound <= most
            ? (int)bound
            : throw new InvalidSettingException(key, read.Text(key), allowed);
    }

    private static int InRange(SectionReader read, string key, long number, int min, int max) => number >= min && number <= max
        ? (int)number
        : throw new InvalidSettingException(key, read.Text(key), $"a whole number from {min} to {max}");

    private static Config LoadReference()
    {
        using var stream = typeof(BatchingTransportSettings).Assembly.GetManifestResourceStream("FlushBatching.Akka.reference.conf")
            ?? throw new InvalidOperationException("FlushBatching.Akka.reference.conf is not embedded in the assembly.");
        using var reader = new StreamReader(stream);
        return ConfigurationFactory.ParseString(reader.ReadToEnd());
    }
}
