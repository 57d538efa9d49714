using System.Net;
using System.Net.Sockets;
using Akka.Actor;
using Akka.Configuration;
using Akka.Event;
using Akka.Remote.Transport;
using Akka.Remote.Transport.DotNetty;
using FlushBatching.Batching;
using FlushBatching.Diagnostics;
using FlushBatching.Framing;
using FlushBatching.Tcp;

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
        var settings = Create(section, sslSetup.HasValue ? sslSetup.Value : null, Logging.GetLogger(system, typeof(BatchingTransportSettings)));
        var flushWait = system.Settings.Config.GetTimeSpan(SettingKeys.CloseTimeout, ConnectionSettings.DefaultCloseTimeout, allowInfinite: false);
        return settings with { Connection = settings.Connection.WithCloseTimeout(flushWait) };
    }

    /// <summary>Reads <paramref name="section"/> (the transport's own config section) over <see cref="Reference"/>.</summary>
    /// <param name="section">The section Akka.Remote hands the transport.</param>
    /// <param name="sslSetup">TLS given in code through <see cref="DotNettySslSetup"/>; as in stock, it takes the place of the section's <c>ssl</c> keys.</param>
    /// <param name="log">Where a warning about the settings goes, and the logger a custom certificate validator is given.</param>
    public static BatchingTransportSettings Create(Config section, DotNettySslSetup? sslSetup = null, ILoggingAdapter? log = null)
    {
        if (log is not null && section is not null)
        {
            WarnAboutMisplacedBatchingKeys(section, log);
            WarnAboutStockOnlyKeys(section, log);
        }

        var read = new SectionReader((section ?? Config.Empty).WithFallback(Reference));
        var hostname = read.Text("hostname");
        if (string.IsNullOrWhiteSpace(hostname))
        {
            hostname = IPAddress.Any.ToString();
        }

        var publicHostname = read.Text("public-hostname");
        var publicPort = Whole(read, "public-port", 0, 65535);
        var connection = read.Apply(() => WithWaterMarks(read, ConnectionSettings.Default
            .WithNoDelay(read.Boolean(SettingKeys.NoDelay))
            .WithKeepAlive(read.Boolean(SettingKeys.KeepAlive))
            .WithSendBufferSize(read.Size(SettingKeys.SendBufferSize))
            .WithReceiveBufferSize(read.Size(SettingKeys.ReceiveBufferSize))
            .WithBacklog(read.Int32(SettingKeys.Backlog))
            .WithConnectTimeout(read.Duration(SettingKeys.ConnectTimeout))
            .WithFraming(FramingSettings.Default
                .WithMaximumFrameSize(read.Size(SettingKeys.MaximumFrameSize))
                .WithByteOrder(ByteOrderOf(read.Text(SettingKeys.ByteOrder))))
            .WithBatching(BatchingSettings.Default
                .WithEnabled(read.Boolean(Batching(SettingKeys.Enabled)))
                .WithMaxPendingWrites(read.Int32(Batching(SettingKeys.MaxPendingWrites)))
                .WithMaxPendingBytes(read.Size(Batching(SettingKeys.MaxPendingBytes)))
                .WithFlushInterval(read.Duration(Batching(SettingKeys.FlushInterval))))),
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
                Port = Whole(read, "port", 0, 65535),
                PublicPort = publicPort == 0 ? null : publicPort,
                DnsUseIpv6 = read.Boolean("dns-use-ipv6"),
            },
            Connection = connection,
            ServerWorkerPoolSize = WorkerPoolSize(read, section, "server-socket-worker-pool"),
            ClientWorkerPoolSize = WorkerPoolSize(read, section, "client-socket-worker-pool"),
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
    // the high mark, half the high mark for the low one.
    private static ConnectionSettings WithWaterMarks(SectionReader read, ConnectionSettings framed)
    {
        var high = read.Size(SettingKeys.HighWaterMark);
        var low = read.Size(SettingKeys.LowWaterMark);
        return framed.WithWriteBufferWaterMarksOrDefaults(high == 0 ? null : high, low == 0 ? null : low);
    }

    // As stock sizes its event loop groups (Akka's ThreadPoolConfig.ScaledPoolSize): the processor count times
    // pool-size-factor, its fraction dropped, kept between pool-size-min and pool-size-max. Stock lets pool-size-max win
    // over a larger pool-size-min without a word; here it is refused, naming the key the section wrote: a pool-size-min
    // raised past the default pool-size-max is the one named (found by fuzzing: the refusal named pool-size-max and its
    // default, which the section never set), and pool-size-max when the section set it.
    private static int WorkerPoolSize(SectionReader read, Config? section, string pool)
    {
        var (minKey, maxKey) = (pool + ".pool-size-min", pool + ".pool-size-max");
        var min = Whole(read, minKey, 1, 1024);
        var max = Whole(read, maxKey, 1, 1024);
        if (min > max)
        {
            // The defaults are equal, so a section that did not set pool-size-max set pool-size-min.
            throw section?.HasPath(maxKey) == true
                ? new InvalidSettingException(maxKey, read.Text(maxKey), $"a whole number from {minKey} ({min}) to 1024")
                : new InvalidSettingException(minKey, read.Text(minKey), $"a whole number from 1 to {maxKey} ({max}); raise {maxKey} with it");
        }

        var factor = read.Number(pool + ".pool-size-factor");
        return factor is > 0 and <= 1024
            ? Math.Min(Math.Max((int)(Environment.ProcessorCount * factor), min), max)
            : throw new InvalidSettingException(pool + ".pool-size-factor", read.Text(pool + ".pool-size-factor"), "a number above 0 and at most 1024, such as 1.0");
    }

    private static int Whole(SectionReader read, string key, int min, int max) => read.Whole(key) is var number && number >= min && number <= max
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
