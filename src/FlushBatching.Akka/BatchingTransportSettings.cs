using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using Akka.Actor;
using Akka.Configuration;
using Akka.Event;
using Akka.Remote.Transport;
using Akka.Remote.Transport.DotNetty;
using FlushBatching.Batching;
using FlushBatching.Tcp;

namespace FlushBatching.Akka;

/// <summary>
/// A FlushBatching transport's settings, read once from its HOCON section with the package's
/// <c>reference.conf</c> as fallback, and validated here: a bad value throws <see cref="InvalidSettingException"/>
/// naming the key, the value and what is allowed.
/// </summary>
internal sealed class BatchingTransportSettings
{
    internal const string HostnameKey = "hostname";
    internal const string PublicHostnameKey = "public-hostname";
    internal const string PortKey = "port";
    internal const string PublicPortKey = "public-port";
    internal const string DnsUseIpv6Key = "dns-use-ipv6";
    internal const string EnableSslKey = "enable-ssl";

    private const string SslPrefix = "ssl.";
    private const string CertificatePrefix = SslPrefix + "certificate.";
    private const string SuppressValidationKey = SslPrefix + "suppress-validation";
    private const string RequireMutualAuthenticationKey = SslPrefix + "require-mutual-authentication";
    private const string ValidateCertificateHostnameKey = SslPrefix + "validate-certificate-hostname";
    private const string PortsAllowed = "a whole number from 0 to 65535";

    private static readonly Dictionary<string, X509KeyStorageFlags> KeyStorageFlags = new()
    {
        ["default-key-set"] = X509KeyStorageFlags.DefaultKeySet,
        ["exportable"] = X509KeyStorageFlags.Exportable,
        ["machine-key-set"] = X509KeyStorageFlags.MachineKeySet,
        ["persist-key-set"] = X509KeyStorageFlags.PersistKeySet,
        ["user-key-set"] = X509KeyStorageFlags.UserKeySet,
        ["user-protected"] = X509KeyStorageFlags.UserProtected,
    };

    private BatchingTransportSettings(
        string hostname, string publicHostname, int port, int? publicPort, bool dnsUseIpv6, ConnectionSettings connection)
    {
        Hostname = hostname;
        PublicHostname = publicHostname;
        Port = port;
        PublicPort = publicPort;
        DnsUseIpv6 = dnsUseIpv6;
        Connection = connection;
    }

    /// <summary>The package's <c>reference.conf</c>: every key of a transport section, with its default.</summary>
    internal static Config Reference { get; } = LoadReference();

    /// <summary>The host to bind to; <c>0.0.0.0</c> when the key is empty.</summary>
    public string Hostname { get; }

    /// <summary>The host other nodes reach this one by: <see cref="Hostname"/> when the key is empty.</summary>
    public string PublicHostname { get; }

    public int Port { get; }

    /// <summary>The port other nodes reach this one by, or <c>null</c> for the bound port.</summary>
    public int? PublicPort { get; }

    public bool DnsUseIpv6 { get; }

    /// <summary>The core engine's settings: socket options, framing, batching, back-pressure and TLS.</summary>
    public ConnectionSettings Connection { get; }

    public bool EnableSsl => Connection.Tls is not null;

    /// <summary><c>tcp</c>, or <c>ssl.tcp</c> with TLS: Akka prefixes <c>akka.</c>, so addresses read <c>akka.tcp://system@host:port</c>.</summary>
    public string SchemeIdentifier => EnableSsl ? "ssl.tcp" : "tcp";

    /// <summary>Reads a transport's section for <paramref name="system"/>, with its <see cref="DotNettySslSetup"/> if any.</summary>
    public static BatchingTransportSettings Create(ActorSystem system, Config section)
    {
        var sslSetup = system.Settings.Setup.Get<DotNettySslSetup>();
        return Create(section, sslSetup.HasValue ? sslSetup.Value : null, Logging.GetLogger(system, typeof(BatchingTransportSettings)));
    }

    /// <summary>Reads <paramref name="section"/> (the transport's own config section) over <see cref="Reference"/>.</summary>
    /// <param name="section">The section Akka.Remote hands the transport.</param>
    /// <param name="sslSetup">TLS given in code through <see cref="DotNettySslSetup"/>; as in stock, it takes the place of the section's <c>ssl</c> keys.</param>
    /// <param name="log">Where a warning about the settings goes, and the logger a custom certificate validator is given.</param>
    public static BatchingTransportSettings Create(Config section, DotNettySslSetup? sslSetup = null, ILoggingAdapter? log = null)
    {
        var config = (section ?? Config.Empty).WithFallback(Reference);
        string Read(string key) => config.GetString(key) ?? throw new InvalidSettingException(key, "(missing)", "a value");

        var hostname = Read(HostnameKey);
        if (string.IsNullOrWhiteSpace(hostname))
        {
            hostname = IPAddress.Any.ToString();
        }

        var publicHostname = Read(PublicHostnameKey);
        var publicPort = ParsePort(PublicPortKey, Read(PublicPortKey));

        var connection = ConnectionSettings.Default;
        foreach (var key in ConnectionSettings.Keys)
        {
            if (key is not (ConnectionSettings.HighWaterMarkKey or ConnectionSettings.LowWaterMarkKey))
            {
                connection = connection.With(key, Read(key));
            }
        }

        foreach (var key in BatchingSettings.Keys)
        {
            connection = connection.With(ConnectionSettings.BatchingPrefix + key, Read(ConnectionSettings.BatchingPrefix + key));
        }

        // Akka.Remote's own section writes 0b for both marks, meaning "the transport's default".
        var high = ReadWaterMark(config, ConnectionSettings.HighWaterMarkKey);
        var low = ReadWaterMark(config, ConnectionSettings.LowWaterMarkKey);
        connection = connection.WithWriteBufferWaterMarks(high, low);

        if (SettingText.ParseBoolean(EnableSslKey, Read(EnableSslKey)))
        {
            connection = connection.WithTls(ReadTls(config, Read, sslSetup, log));
        }

        return new BatchingTransportSettings(
            hostname,
            string.IsNullOrWhiteSpace(publicHostname) ? hostname : publicHostname,
            ParsePort(PortKey, Read(PortKey)),
            publicPort == 0 ? null : publicPort,
            SettingText.ParseBoolean(DnsUseIpv6Key, Read(DnsUseIpv6Key)),
            connection);
    }

    /// <summary>
    /// The settings for a connection to <paramref name="remote"/>: with TLS, the server's certificate is checked
    /// against the address's host, as stock does, whatever endpoint the host resolves to.
    /// </summary>
    public ConnectionSettings ConnectionTo(Address remote) =>
        Connection.Tls is { } tls ? Connection.WithTls(tls.WithTargetHost(TargetHost(remote))) : Connection;

    /// <summary>The host name a TLS client expects in the certificate of <paramref name="remote"/>: its host, without IPv6 brackets.</summary>
    public static string TargetHost(Address remote) => (remote.Host ?? "").Trim('[', ']');

    /// <summary>The bound address as Akka names it: the public host and port where given.</summary>
    public Address ListenAddress(string scheme, string systemName, IPEndPoint bound) =>
        new(scheme, systemName, AddressHost(PublicHostname), PublicPort ?? bound.Port);

    /// <summary>A connection's local address as Akka's handles name it: the bind host with the socket's port.</summary>
    public Address LocalAddress(string scheme, string systemName, IPEndPoint local) =>
        new(scheme, systemName, AddressHost(Hostname), local.Port);

    /// <summary>The Akka address of an inbound connection's peer, as stock names it: this system's name, the peer's socket.</summary>
    public static Address PeerAddress(string scheme, string systemName, IPEndPoint peer) =>
        new(scheme, systemName, AddressHost(peer.Address), peer.Port);

    /// <summary>An IPv6 address in brackets, as Akka writes it in an address; a name as it is.</summary>
    public static string AddressHost(string host) =>
        IPAddress.TryParse(host, out var ip) ? AddressHost(ip) : host;

    /// <inheritdoc cref="AddressHost(string)"/>
    public static string AddressHost(IPAddress ip) =>
        ip.AddressFamily == AddressFamily.InterNetworkV6 ? $"[{ip}]" : ip.ToString();

    /// <summary>Resolves a host name (or parses an address) to an endpoint, IPv4 unless <c>dns-use-ipv6</c>.</summary>
    /// <exception cref="SocketException">The name does not resolve to an address of that family.</exception>
    public async Task<IPEndPoint> ResolveAsync(string host, int port)
    {
        if (IPAddress.TryParse(host.Trim('[', ']'), out var ip))
        {
            return new IPEndPoint(ip, port);
        }

        var family = DnsUseIpv6 ? AddressFamily.InterNetworkV6 : AddressFamily.InterNetwork;
        var addresses = await Dns.GetHostAddressesAsync(host, family).ConfigureAwait(false);
        return addresses.Length > 0 ? new IPEndPoint(addresses[^1], port) : throw new SocketException((int)SocketError.HostNotFound);
    }

    /// <summary>
    /// The endpoint to connect to for an Akka address. A peer that bound every address names itself 0.0.0.0 or [::]:
    /// like stock, reach it on this machine's loopback.
    /// </summary>
    /// <exception cref="InvalidAssociationException">The address has no host or port.</exception>
    /// <exception cref="SocketException">The host name does not resolve.</exception>
    public async Task<IPEndPoint> ConnectableEndPointAsync(Address remote)
    {
        if (remote.Port is not { } port || string.IsNullOrEmpty(remote.Host))
        {
            throw new InvalidAssociationException($"Cannot associate with {remote}: it has no host and port.");
        }

        var endpoint = await ResolveAsync(remote.Host, port).ConfigureAwait(false);
        return endpoint.Address.Equals(IPAddress.Any) ? new IPEndPoint(IPAddress.Loopback, port)
            : endpoint.Address.Equals(IPAddress.IPv6Any) ? new IPEndPoint(IPAddress.IPv6Loopback, port)
            : endpoint;
    }

    /// <summary>The settings as one HOCON-like line, for the start-up log.</summary>
    public override string ToString() =>
        $"batching {{ {Connection.Batching} }}, {Connection.Framing}, " +
        $"write-buffer-high-water-mark = {SettingText.FormatSize(Connection.WriteBufferHighWaterMark)}, " +
        $"write-buffer-low-water-mark = {SettingText.FormatSize(Connection.WriteBufferLowWaterMark)}, " +
        (Connection.Tls is { } tls
            ? $"enable-ssl = on, ssl {{ require-mutual-authentication = {OnOff(tls.RequireMutualAuthentication)}, " +
              $"validate-certificate-hostname = {OnOff(tls.ValidateHostname)}, suppress-validation = {OnOff(tls.SuppressValidation)}" +
              $"{(tls.CertificateValidator is null ? "" : ", custom validator")} }}"
            : "enable-ssl = off");

    private static string OnOff(bool value) => value ? "on" : "off";

    private static long ReadWaterMark(Config config, string key)
    {
        var size = SettingText.ParseSize(key, config.GetString(key));
        return size == 0 ? SettingText.ParseSize(key, Reference.GetString(key)) : size;
    }

    private static int ParsePort(string key, string value)
    {
        var port = SettingText.ParseInteger(key, value);
        return port is >= 0 and <= 65535 ? (int)port : throw new InvalidSettingException(key, value, PortsAllowed);
    }

    private static TlsSettings ReadTls(Config config, Func<string, string> read, DotNettySslSetup? sslSetup, ILoggingAdapter? log)
    {
        if (sslSetup is not null)
        {
            // As stock 1.5.74: a certificate given in code wins over the section, whose ssl keys are then ignored.
            if (!string.IsNullOrWhiteSpace(read(CertificatePrefix + "path")) || !string.IsNullOrWhiteSpace(read(CertificatePrefix + "thumbprint")))
            {
                log?.Warning("Both DotNettySslSetup and HOCON SSL configuration are present. DotNettySslSetup takes precedence and HOCON SSL settings will be ignored.");
            }

            TlsSettings fromSetup;
            try
            {
                fromSetup = TlsSettings.FromCertificate(sslSetup.Certificate);
            }
            catch (ArgumentException e)
            {
                throw new InvalidSettingException(nameof(DotNettySslSetup) + "." + nameof(DotNettySslSetup.Certificate), sslSetup.Certificate.Subject, $"a certificate with a usable private key ({e.Message})", e);
            }

            return Judging(fromSetup, sslSetup.SuppressValidation, sslSetup.RequireMutualAuthentication, sslSetup.ValidateCertificateHostname, sslSetup.CustomValidator, log);
        }

        // Plain values first, so that a typo is named even when the certificate would not load either.
        var suppressValidation = SettingText.ParseBoolean(SuppressValidationKey, read(SuppressValidationKey));
        var requireMutualAuthentication = SettingText.ParseBoolean(RequireMutualAuthenticationKey, read(RequireMutualAuthenticationKey));
        var validateHostname = SettingText.ParseBoolean(ValidateCertificateHostnameKey, read(ValidateCertificateHostnameKey));
        var byThumbprint = SettingText.ParseBoolean(CertificatePrefix + "use-thumbprint-over-file", read(CertificatePrefix + "use-thumbprint-over-file"));
        TlsSettings tls;
        if (byThumbprint)
        {
            var thumbprint = read(CertificatePrefix + "thumbprint");
            if (string.IsNullOrWhiteSpace(thumbprint))
            {
                throw new InvalidSettingException(CertificatePrefix + "thumbprint", thumbprint, "a certificate thumbprint when use-thumbprint-over-file is on");
            }

            tls = TlsSettings.FromStore(ParseStoreName(read(CertificatePrefix + "store-name")), ParseStoreLocation(read(CertificatePrefix + "store-location")), thumbprint);
        }
        else
        {
            tls = TlsSettings.FromPfxFile(read(CertificatePrefix + "path"), read(CertificatePrefix + "password"), ParseFlags(config.GetStringList(CertificatePrefix + "flags")));
        }

        return Judging(tls, suppressValidation, requireMutualAuthentication, validateHostname, customValidator: null, log);
    }

    // How a peer's certificate is judged, as stock 1.5.74 does: the host connected to is the Akka address's host
    // (the connector passes it), and a custom validator from DotNettySslSetup decides alone, with Akka's logger.
    private static TlsSettings Judging(
        TlsSettings tls, bool suppressValidation, bool requireMutualAuthentication, bool validateHostname,
        CertificateValidationCallback? customValidator, ILoggingAdapter? log)
    {
        tls = tls.WithSuppressValidation(suppressValidation)
            .WithRequireMutualAuthentication(requireMutualAuthentication)
            .WithValidateHostname(validateHostname);
        var logger = log ?? NoLogger.Instance;
        return customValidator is null
            ? tls
            : tls.WithCertificateValidator((certificate, chain, errors, peer) => customValidator(certificate, chain, peer, errors, logger));
    }

    private static StoreName ParseStoreName(string value)
    {
        if (string.IsNullOrWhiteSpace(value))
        {
            return StoreName.My;
        }

        return Enum.TryParse<StoreName>(value, ignoreCase: true, out var name) && Enum.IsDefined(name)
            ? name
            : throw new InvalidSettingException(CertificatePrefix + "store-name", value, $"empty, or one of {string.Join(", ", Enum.GetNames<StoreName>())}");
    }

    private static StoreLocation ParseStoreLocation(string value) => value switch
    {
        "current-user" => StoreLocation.CurrentUser,
        "local-machine" => StoreLocation.LocalMachine,
        _ => throw new InvalidSettingException(CertificatePrefix + "store-location", value, "current-user or local-machine"),
    };

    private static X509KeyStorageFlags ParseFlags(IList<string>? names)
    {
        var flags = X509KeyStorageFlags.DefaultKeySet;
        foreach (var name in names ?? [])
        {
            flags |= KeyStorageFlags.TryGetValue(name, out var flag)
                ? flag
                : throw new InvalidSettingException(CertificatePrefix + "flags", name, $"a list of any of {string.Join(", ", KeyStorageFlags.Keys)}");
        }

        return flags;
    }

    private static Config LoadReference()
    {
        using var stream = typeof(BatchingTransportSettings).Assembly.GetManifestResourceStream("FlushBatching.Akka.reference.conf")
            ?? throw new InvalidOperationException("FlushBatching.Akka.reference.conf is not embedded in the assembly.");
        using var reader = new StreamReader(stream);
        return ConfigurationFactory.ParseString(reader.ReadToEnd());
    }
}
