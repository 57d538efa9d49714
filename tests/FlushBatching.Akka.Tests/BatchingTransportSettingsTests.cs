using System.Globalization;
using System.Security.Cryptography.X509Certificates;
using Akka.Actor;
using Akka.Configuration;
using Akka.Configuration.Hocon;
using Akka.Dispatch;
using Akka.Event;
using Akka.Remote;
using Akka.Remote.Transport.DotNetty;
using FlushBatching.Akka.Tests.Support;
using FlushBatching.Batching;
using FlushBatching.Framing;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Admission;
using FlushBatching.Tests.Support;

namespace FlushBatching.Akka.Tests;

public sealed class BatchingTransportSettingsTests
{
    [Fact]
    public void Reference_conf_holds_the_core_defaults_for_every_key_the_core_knows()
    {
        var fromReference = BatchingTransportSettings.Create(Config.Empty).Connection;
        var core = ConnectionSettings.Default;

        Assert.Equal(core.Batching, fromReference.Batching);
        Assert.Equal(BatchingSettings.Default, fromReference.Batching);
        Assert.Equal(FramingSettings.Default, fromReference.Framing);
        Assert.Equal(core.NoDelay, fromReference.NoDelay);
        Assert.Equal(core.KeepAlive, fromReference.KeepAlive);
        Assert.Equal(core.SendBufferSize, fromReference.SendBufferSize);
        Assert.Equal(core.ReceiveBufferSize, fromReference.ReceiveBufferSize);
        Assert.Equal(core.Backlog, fromReference.Backlog);
        Assert.Equal(core.ConnectTimeout, fromReference.ConnectTimeout);
        Assert.Equal(core.MaxInboundConnections, fromReference.MaxInboundConnections);
        Assert.Equal(core.WriteBufferHighWaterMark, fromReference.WriteBufferHighWaterMark);
        Assert.Equal(core.WriteBufferLowWaterMark, fromReference.WriteBufferLowWaterMark);
        Assert.Null(fromReference.Tls);
    }

    [Fact]
    public void Reference_conf_writes_every_key_the_settings_read_and_no_other()
    {
        var keys = Flatten(BatchingTransportSettings.Reference.Root.GetObject().Items, "").ToHashSet();
        string[] expected =
            [
                "tcp-nodelay", "tcp-keepalive", "send-buffer-size", "receive-buffer-size", "backlog", "connection-timeout",
                "write-buffer-high-water-mark", "write-buffer-low-water-mark", "maximum-frame-size", "byte-order",
                "batching.enabled", "batching.max-pending-writes", "batching.max-pending-bytes", "batching.flush-interval",
                "hostname", "public-hostname", "port", "public-port", "dns-use-ipv6", "enable-ssl",
                "ssl.certificate.path", "ssl.certificate.password", "ssl.certificate.common-name", "ssl.certificate.use-thumbprint-over-file",
                "ssl.certificate.thumbprint", "ssl.certificate.store-name", "ssl.certificate.store-location",
                "ssl.certificate.flags", "ssl.suppress-validation", "ssl.require-mutual-authentication",
                "ssl.validate-certificate-hostname",
                "server-socket-worker-pool.pool-size-min", "server-socket-worker-pool.pool-size-factor", "server-socket-worker-pool.pool-size-max",
                "client-socket-worker-pool.pool-size-min", "client-socket-worker-pool.pool-size-factor", "client-socket-worker-pool.pool-size-max",
                "event-loop", "max-inbound-connections",
            ];

        Assert.Equal(string.Join(" ", expected.Order()), string.Join(" ", keys.Order()));
    }

    [Theory]
    [InlineData("auto", null)]
    [InlineData("AUTO", null)]
    [InlineData("unbounded", 0)]
    [InlineData("0", 0)]
    [InlineData("100", 100)]
    public void Max_inbound_connections_is_derived_unbounded_or_as_set(string value, int? expected)
    {
        var settings = BatchingTransportSettings.Create(ConfigurationFactory.ParseString($"max-inbound-connections = {value}"));

        Assert.Equal(expected, settings.Connection.MaxInboundConnections);
    }

    [LinuxFact("reads RLIMIT_NOFILE through libc")]
    public void A_max_inbound_connections_that_leaves_no_reserve_of_descriptors_is_refused_naming_the_limit()
    {
        var limit = DescriptorBudget.ProcessLimit()!.Value;
        var most = limit - DescriptorBudget.Reserve(limit);

        Assert.Equal(most, BatchingTransportSettings.Create(ConfigurationFactory.ParseString($"max-inbound-connections = {most}")).Connection.MaxInboundConnections);
        var e = Assert.Throws<InvalidSettingException>(() => BatchingTransportSettings.Create(ConfigurationFactory.ParseString($"max-inbound-connections = {most + 1}")));
        Assert.Equal("max-inbound-connections", e.Key);
        Assert.Contains($"descriptor limit of {limit}", e.Allowed);
    }

    [Fact]
    public void The_top_level_defaults_are_those_of_stock_Akka_Remote()
    {
        var settings = BatchingTransportSettings.Create(Config.Empty);

        Assert.Equal("0.0.0.0", settings.Addressing.Hostname);
        Assert.Equal("0.0.0.0", settings.Addressing.PublicHostname);
        Assert.Equal(2552, settings.Addressing.Port);
        Assert.Null(settings.Addressing.PublicPort);
        Assert.False(settings.Addressing.DnsUseIpv6);
        Assert.False(settings.EnableSsl);
    }

    [Fact]
    public void Every_key_of_a_stock_section_keeps_its_meaning()
    {
        var settings = BatchingTransportSettings.Create(ConfigurationFactory.ParseString("""
            hostname = 127.0.0.1
            public-hostname = node1.example
            port = 4053
            public-port = 14053
            maximum-frame-size = 256000b
            byte-order = big-endian
            send-buffer-size = 0b
            receive-buffer-size = 512000b
            tcp-nodelay = off
            tcp-keepalive = off
            backlog = 100
            connection-timeout = 2 s
            write-buffer-high-water-mark = 2m
            write-buffer-low-water-mark = 1m
            batching { enabled = false, max-pending-writes = 64, max-pending-bytes = 32k, flush-interval = 5ms }
            """));

        Assert.Equal("127.0.0.1", settings.Addressing.Hostname);
        Assert.Equal("node1.example", settings.Addressing.PublicHostname);
        Assert.Equal(4053, settings.Addressing.Port);
        Assert.Equal(14053, settings.Addressing.PublicPort);
        var connection = settings.Connection;
        Assert.Equal(256000, connection.Framing.MaximumFrameSize);
        Assert.Equal(ByteOrder.BigEndian, connection.Framing.ByteOrder);
        Assert.Equal(0, connection.SendBufferSize);
        Assert.Equal(512000, connection.ReceiveBufferSize);
        Assert.False(connection.NoDelay);
        Assert.False(connection.KeepAlive);
        Assert.Equal(100, connection.Backlog);
        Assert.Equal(TimeSpan.FromSeconds(2), connection.ConnectTimeout);
        Assert.Equal(2 << 20, connection.WriteBufferHighWaterMark);
        Assert.Equal(1 << 20, connection.WriteBufferLowWaterMark);
        Assert.Equal(BatchingSettings.Default.WithEnabled(false).WithMaxPendingWrites(64).WithMaxPendingBytes(32 * 1024).WithFlushInterval(TimeSpan.FromMilliseconds(5)), connection.Batching);
    }

    [Theory]
    [InlineData(40 * TimeSpan.TicksPerMillisecond)]
    [InlineData(90 * TimeSpan.TicksPerSecond)]
    [InlineData(2 * TimeSpan.TicksPerMinute)]
    [InlineData(5000)]
    [InlineData(1)]
    public void A_duration_as_the_core_writes_it_reads_back_through_Akkas_HOCON_to_the_same_value(long ticks)
    {
        var interval = TimeSpan.FromTicks(ticks);
        var settings = BatchingTransportSettings.Create(ConfigurationFactory.ParseString(
            $"batching.flush-interval = {SettingText.FormatDuration(interval)}\nbatching.max-pending-bytes = {SettingText.FormatSize(128001)}"));

        Assert.Equal(interval, settings.Connection.Batching.FlushInterval);
        Assert.Equal(128001, settings.Connection.Batching.MaxPendingBytes);
    }

    [Theory]
    [InlineData("", 2000)] // Akka.Remote's own default
    [InlineData("akka.remote.flush-wait-on-shutdown = 750ms", 750)]
    [InlineData("akka.remote.flush-wait-on-shutdown = 0s", 0)] // stock's own close: nothing waited for
    [InlineData("akka.remote.flush-wait-on-shutdown = 2h", 3_600_000)] // stock starts with it: corrected, with a WARNING
    public void Every_close_is_bounded_by_the_system_s_flush_wait_on_shutdown(string hocon, int milliseconds)
    {
        using var system = ActorSystem.Create("flush-wait", ConfigurationFactory.ParseString(hocon));

        var settings = BatchingTransportSettings.Create(system, Config.Empty);

        Assert.Equal(TimeSpan.FromMilliseconds(milliseconds), settings.Connection.CloseTimeout);
    }

    [Fact]
    public void Worker_pools_are_sized_as_stock_sizes_them_from_the_processor_count_within_their_bounds()
    {
        // A factor that puts the processor count times it half-way between two whole numbers, on any machine: stock
        // drops the fraction.
        var between = (Environment.ProcessorCount + 0.5) / Environment.ProcessorCount;
        var defaults = BatchingTransportSettings.Create(Config.Empty);
        var set = BatchingTransportSettings.Create(ConfigurationFactory.ParseString($$"""
            server-socket-worker-pool { pool-size-min = 1, pool-size-factor = {{between.ToString(CultureInfo.InvariantCulture)}}, pool-size-max = 64 }
            client-socket-worker-pool { pool-size-min = 1, pool-size-factor = 4.0, pool-size-max = 1 }
            """));

        Assert.Equal((2, 2), (defaults.ServerWorkerPoolSize, defaults.ClientWorkerPoolSize));
        Assert.Equal(ThreadPoolConfig.ScaledPoolSize(1, between, 64), set.ServerWorkerPoolSize);
        Assert.Equal(ThreadPoolConfig.ScaledPoolSize(1, 4.0, 1), set.ClientWorkerPoolSize);
    }

    [Fact]
    public void A_high_water_mark_set_alone_below_the_default_low_one_takes_half_of_it_as_the_low_mark()
    {
        // As under akka.remote.dot-netty.tcp, where Akka's own reference writes 0b for the low mark.
        var settings = BatchingTransportSettings.Create(ConfigurationFactory.ParseString(
            "write-buffer-high-water-mark = 256k\nwrite-buffer-low-water-mark = 0b"));

        Assert.Equal(256 * 1024, settings.Connection.WriteBufferHighWaterMark);
        Assert.Equal(128 * 1024, settings.Connection.WriteBufferLowWaterMark);
    }

    [Fact]
    public void Stock_zero_water_marks_mean_eight_maximum_size_frames_and_half_of_that()
    {
        var settings = BatchingTransportSettings.Create(ConfigurationFactory.ParseString(
            "write-buffer-high-water-mark = 0b\nwrite-buffer-low-water-mark = 0b\nmaximum-frame-size = 2MB"));

        Assert.Equal(ConnectionSettings.DefaultWriteBufferFrames * 2_000_000L, settings.Connection.WriteBufferHighWaterMark);
        Assert.Equal(ConnectionSettings.DefaultWriteBufferFrames * 1_000_000L, settings.Connection.WriteBufferLowWaterMark);
    }

    [Fact]
    public void Reference_conf_agrees_with_stock_Akka_Remote_on_every_key_both_have_but_the_water_marks()
    {
        using var stream = typeof(RemoteSettings).Assembly.GetManifestResourceStream("Akka.Remote.Configuration.Remote.conf")!;
        using var reader = new StreamReader(stream);
        var stock = ConfigurationFactory.ParseString(reader.ReadToEnd()).GetConfig("akka.remote.dot-netty.tcp");
        var ours = BatchingTransportSettings.Reference;
        var shared = Flatten(ours.Root.GetObject().Items, "")
            .Where(key => stock.HasPath(key) && key is not (SettingKeys.HighWaterMark or SettingKeys.LowWaterMark))
            .ToList();

        Assert.Contains("ssl.require-mutual-authentication", shared);
        Assert.Contains("ssl.validate-certificate-hostname", shared);
        Assert.Contains("server-socket-worker-pool.pool-size-factor", shared);
        Assert.All(shared, key => Assert.True(
            Normalize(stock.GetString(key)) == Normalize(ours.GetString(key)),
            $"{key}: stock {stock.GetString(key)}, ours {ours.GetString(key)}"));

        // HOCON writes one value several ways: on/true, 15 s/15s.
        static string Normalize(string? value) => (value ?? "").Replace(" ", "") switch
        {
            "on" or "yes" => "true",
            "off" or "no" => "false",
            var other => other,
        };
    }

    [Fact]
    public void Tls_defaults_are_those_of_stock_1_5_74_mutual_authentication_on_and_host_names_unchecked()
    {
        using var authority = new TestCertificateAuthority(trusted: false);
        var tls = BatchingTransportSettings.Create(ConfigurationFactory.ParseString(SslSection(authority.IssueForLoopback()))).Connection.Tls!;

        Assert.True(tls.RequireMutualAuthentication);
        Assert.False(tls.ValidateHostname);
        Assert.False(tls.SuppressValidation);
        Assert.Null(tls.CertificateValidator);

        var overridden = BatchingTransportSettings.Create(ConfigurationFactory.ParseString(SslSection(authority.IssueForLoopback()) +
            "\nssl { require-mutual-authentication = off, validate-certificate-hostname = on, suppress-validation = on }")).Connection.Tls!;
        Assert.False(overridden.RequireMutualAuthentication);
        Assert.True(overridden.ValidateHostname);
        Assert.True(overridden.SuppressValidation);
    }

    [Fact]
    public void A_DotNettySslSetup_takes_the_place_of_the_section_ssl_keys_as_in_stock()
    {
        using var authority = new TestCertificateAuthority(trusted: false);
        using var certificate = X509CertificateLoader.LoadPkcs12FromFile(authority.IssueForLoopback(), TestCertificateAuthority.Password);
        var calls = 0;
        var setup = new DotNettySslSetup(certificate, suppressValidation: true, requireMutualAuthentication: false, validateCertificateHostname: true,
            customValidator: (_, _, _, _, _) => ++calls > 0);

        // The section names a file that does not exist: stock ignores it when a setup is given, and so does this transport.
        var tls = BatchingTransportSettings.Create(
            ConfigurationFactory.ParseString("enable-ssl = on\nssl.certificate.path = /nonexistent.pfx\nssl.require-mutual-authentication = on"), setup).Connection.Tls!;

        Assert.Same(certificate, tls.Certificate);
        Assert.True(tls.SuppressValidation);
        Assert.False(tls.RequireMutualAuthentication);
        Assert.True(tls.ValidateHostname);
        Assert.True(tls.CertificateValidator!(null, null, System.Net.Security.SslPolicyErrors.None, "peer"));
        Assert.Equal(1, calls);
    }

    [Fact]
    public void A_certificate_without_a_private_key_stops_the_settings_naming_the_key()
    {
        using var authority = new TestCertificateAuthority(trusted: false);
        var publicOnly = authority.WithoutPrivateKey(authority.IssueForLoopback());

        var e = Assert.Throws<InvalidSettingException>(() => BatchingTransportSettings.Create(ConfigurationFactory.ParseString(SslSection(publicOnly))));

        Assert.Equal("ssl.certificate.path", e.Key);
        Assert.Contains("private key", e.Message);
    }

    [Fact]
    public void The_top_of_each_worker_pool_range_is_allowed()
    {
        var settings = BatchingTransportSettings.Create(ConfigurationFactory.ParseString(
            "server-socket-worker-pool { pool-size-min = 1, pool-size-max = 1024, pool-size-factor = 1024 }"));

        Assert.Equal(1024, settings.ServerWorkerPoolSize);
    }

    [Fact]
    public void The_start_up_line_and_the_address_scheme_say_whether_tls_is_on_and_how_peers_are_judged()
    {
        using var authority = new TestCertificateAuthority(trusted: false);
        var plain = BatchingTransportSettings.Create(ConfigurationFactory.ParseString(""));
        var tls = BatchingTransportSettings.Create(ConfigurationFactory.ParseString(SslSection(authority.IssueForLoopback())));
        using var certificate = X509CertificateLoader.LoadPkcs12FromFile(authority.IssueForLoopback(), TestCertificateAuthority.Password);
        var judged = BatchingTransportSettings.Create(ConfigurationFactory.ParseString("enable-ssl = on"),
            new DotNettySslSetup(certificate, suppressValidation: true, requireMutualAuthentication: false, validateCertificateHostname: true, customValidator: (_, _, _, _, _) => true));

        Assert.Equal("tcp", plain.SchemeIdentifier);
        Assert.Equal(
            $"batching {{ {BatchingSettings.Default} }}, {FramingSettings.Default}, write-buffer-high-water-mark = 1000k (following the drain rate up to 4000k), write-buffer-low-water-mark = 500k, enable-ssl = off",
            plain.ToString());
        Assert.Equal("ssl.tcp", tls.SchemeIdentifier);
        Assert.EndsWith(", enable-ssl = on, ssl { require-mutual-authentication = on, validate-certificate-hostname = off, suppress-validation = off }", tls.ToString());
        Assert.EndsWith(", enable-ssl = on, ssl { require-mutual-authentication = off, validate-certificate-hostname = on, suppress-validation = on, custom validator }", judged.ToString());
    }

    [Theory]
    [InlineData("max-pending-writes = 7", "'max-pending-writes' is written beside 'batching'", "as 'batching.max-pending-writes'")]
    [InlineData("flush-interval = 1ms", "'flush-interval' is written beside 'batching'", "as 'batching.flush-interval'")]
    [InlineData("batching.max-pendng-writes = 7", "'batching.max-pendng-writes' is not a batching key", "batching.max-pending-writes")]
    [InlineData("batching { enabled = on, flush-intervall = 1ms }", "'batching.flush-intervall' is not a batching key", "batching.flush-interval")]
    public void A_batching_key_in_the_wrong_place_logs_one_warning_naming_it_and_where_it_belongs(string section, string what, string where)
    {
        var log = new RecordingLog();

        BatchingTransportSettings.Create(ConfigurationFactory.ParseString(section), log: log);

        var warning = Assert.Single(log.Entries);
        Assert.Equal(LogLevel.WarningLevel, warning.Level);
        Assert.Contains(what, warning.Message);
        Assert.Contains(where, warning.Message);
    }

    [Theory]
    [InlineData("enable-pooling = off", "'enable-pooling = off' is read by the stock transport only and is ignored")]
    [InlineData("log-transport = true", "'log-transport = true' is read by the stock transport only and is ignored")]
    [InlineData("tcp-reuse-addr = on", "'tcp-reuse-addr = on' is read by the stock transport only and is ignored")]
    [InlineData("use-dispatcher-for-io = my-dispatcher", "'use-dispatcher-for-io = my-dispatcher' is read by the stock transport only")]
    [InlineData("transport-protocol = udp", "'transport-protocol = udp' is read by the stock transport only")]
    [InlineData("enforce-ip-family = on", "'enforce-ip-family = on' is read by the stock transport only")]
    [InlineData("enable-backwards-compatibility = yes", "'enable-backwards-compatibility = yes' is read by the stock transport only")]
    public void A_key_only_stock_uses_set_away_from_stocks_default_logs_one_warning_naming_it(string section, string what)
    {
        var log = new RecordingLog();

        BatchingTransportSettings.Create(ConfigurationFactory.ParseString(section), log: log);

        var warning = Assert.Single(log.Entries);
        Assert.Equal(LogLevel.WarningLevel, warning.Level);
        Assert.Contains(what, warning.Message);
    }

    [Fact]
    public async Task A_remote_nodes_own_section_logs_nothing()
    {
        // The section a node hands its transport: Akka.Remote's reference.conf beneath the node's configuration.
        var system = ActorSystem.Create("stock-keys", "akka.actor.provider = remote\nakka.remote.dot-netty.tcp { hostname = 127.0.0.1, port = 0 }");
        try
        {
            var log = new RecordingLog();

            BatchingTransportSettings.Create(system.Settings.Config.GetConfig("akka.remote.dot-netty.tcp"), log: log);

            Assert.Empty(log.Entries);
        }
        finally
        {
            await system.Terminate();
        }
    }

    [Fact]
    public void Akka_remotes_own_defaults_for_the_keys_only_stock_uses_log_nothing()
    {
        // What a node's section holds under akka.remote.dot-netty.tcp: Akka.Remote's reference.conf, every key at stock's
        // default, with booleans spelt either way.
        var log = new RecordingLog();

        BatchingTransportSettings.Create(ConfigurationFactory.ParseString(
            "transport-protocol = tcp\nenforce-ip-family = false\ntcp-reuse-addr = off-for-windows\nuse-dispatcher-for-io = \"\"\n" +
            "enable-backwards-compatibility = off\nlog-transport = false\nenable-pooling = true"), log: log);

        Assert.Empty(log.Entries);
    }

    [Fact]
    public void A_section_with_every_batching_key_in_its_place_logs_nothing()
    {
        var log = new RecordingLog();

        BatchingTransportSettings.Create(
            ConfigurationFactory.ParseString("batching { enabled = on, max-pending-writes = 7, max-pending-bytes = 8k, flush-interval = 1ms }\nport = 0"), log: log);

        Assert.Empty(log.Entries);
    }

    [Theory]
    [InlineData("ssl.certificate.path = /nonexistent.pfx")]
    [InlineData("ssl.certificate.thumbprint = abc")]
    public void A_certificate_in_the_section_beside_one_given_in_code_is_ignored_with_a_warning_and_the_validator_logs_to_akka(string section)
    {
        using var authority = new TestCertificateAuthority(trusted: false);
        using var certificate = X509CertificateLoader.LoadPkcs12FromFile(authority.IssueForLoopback(), TestCertificateAuthority.Password);
        var log = new RecordingLog();
        ILoggingAdapter? validatorLog = null;
        var setup = new DotNettySslSetup(certificate, suppressValidation: false, requireMutualAuthentication: true, validateCertificateHostname: false,
            customValidator: (_, _, _, _, logger) => (validatorLog = logger) is not null);

        var tls = BatchingTransportSettings.Create(ConfigurationFactory.ParseString("enable-ssl = on\n" + section), setup, log).Connection.Tls!;
        tls.CertificateValidator!(null, null, System.Net.Security.SslPolicyErrors.None, "peer");

        Assert.Contains(log.Entries, e => e.Level == LogLevel.WarningLevel && e.Message.Contains("DotNettySslSetup takes precedence"));
        Assert.Same(log, validatorLog);
        var quiet = new RecordingLog();
        BatchingTransportSettings.Create(ConfigurationFactory.ParseString("enable-ssl = on"), setup, quiet);
        Assert.Empty(quiet.Entries);
    }

    [Fact]
    public void A_certificate_given_in_code_without_a_private_key_is_refused_naming_the_setup()
    {
        using var authority = new TestCertificateAuthority(trusted: false);
        using var withKey = X509CertificateLoader.LoadPkcs12FromFile(authority.IssueForLoopback(), TestCertificateAuthority.Password);
        using var publicOnly = X509CertificateLoader.LoadCertificate(withKey.RawData);

        var e = Assert.Throws<InvalidSettingException>(() =>
            BatchingTransportSettings.Create(ConfigurationFactory.ParseString("enable-ssl = on"), new DotNettySslSetup(publicOnly, suppressValidation: false, requireMutualAuthentication: true)));

        Assert.Equal("DotNettySslSetup.Certificate", e.Key);
        Assert.Contains("a certificate with a usable private key", e.Message);
    }

    [Theory]
    [InlineData("use-thumbprint-over-file = on", "ssl.certificate.thumbprint")]
    [InlineData("use-thumprint-over-file = on", "ssl.certificate.thumbprint")] // Akka's own spelling from 2018 to 2022, which stock still reads
    [InlineData("use-thumprint-over-file = on, use-thumbprint-over-file = off", "ssl.certificate.thumbprint")]
    [InlineData("use-thumprint-over-file = off", "ssl.certificate.path")]
    [InlineData("", "ssl.certificate.path")]
    public void The_thumbprint_switch_is_read_under_both_spellings_stock_reads(string switches, string keyOfTheRefusal)
    {
        // Either spelling on takes the certificate from the store, as stock's reading does; neither on, from the file.
        // The store has no certificate of that thumbprint and the file is not set: the refusal says which was used.
        var e = Assert.Throws<InvalidSettingException>(() => BatchingTransportSettings.Create(ConfigurationFactory.ParseString(
            $"enable-ssl = on\nssl.certificate {{ {switches}, thumbprint = 0123456789abcdef0123456789abcdef01234567, store-name = my }}".Replace("{ , ", "{ "))));

        Assert.Equal(keyOfTheRefusal, e.Key);
    }

    [Theory]
    [InlineData("MY", "current-user")]
    [InlineData("root", "local-machine")]
    public void Store_names_of_any_case_and_both_store_locations_are_read(string name, string location)
    {
        // The certificate is looked up only once both are read: the error is about the thumbprint, not them.
        var e = Assert.Throws<InvalidSettingException>(() => BatchingTransportSettings.Create(ConfigurationFactory.ParseString(
            $"enable-ssl = on\nssl.certificate {{ use-thumbprint-over-file = on, thumbprint = abc, store-name = {name}, store-location = {location} }}")));

        Assert.Equal("ssl.certificate.thumbprint", e.Key);
    }

    [Fact]
    public void A_windows_path_reaches_the_settings_as_written_through_the_tests_one_quoting()
    {
        const string path = @"C:\Users\runner\AppData\Local\Temp\node.pfx";
        Assert.ThrowsAny<Exception>(() => ConfigurationFactory.ParseString($"ssl.certificate.path = \"{path}\""));

        var section = ConfigurationFactory.ParseString($"ssl.certificate.path = {Hocon.Quoted(path)}");

        Assert.Equal(path, section.GetString("ssl.certificate.path"));
    }

    [LinuxFact(IsolatedStore.Reason)]
    public void A_store_of_any_name_is_opened_as_stock_opens_it_and_serves_its_certificate()
    {
        // Stock passes store-name to X509Store whatever it is: WebHosting on Windows, or a store an application made.
        using var pfx = new SelfSignedCertificate();
        using var certificate = X509CertificateLoader.LoadPkcs12FromFile(pfx.PfxPath, SelfSignedCertificate.Password, X509KeyStorageFlags.Exportable | X509KeyStorageFlags.PersistKeySet);
        IsolatedStore.Require();
        using var store = new X509Store("WebHosting", StoreLocation.CurrentUser);
        store.Open(OpenFlags.ReadWrite);
        store.Add(certificate);
        try
        {
            var settings = BatchingTransportSettings.Create(ConfigurationFactory.ParseString(
                $"enable-ssl = on\nssl.certificate {{ use-thumbprint-over-file = on, thumbprint = {certificate.Thumbprint}, store-name = WebHosting }}"));

            Assert.Equal(certificate.Thumbprint, settings.Connection.Tls!.Certificate!.Thumbprint);
        }
        finally
        {
            store.Remove(certificate);
        }
    }

    [LinuxFact("on Linux, LocalMachine has only Root and CertificateAuthority; other systems open My there")]
    public void A_store_the_platform_cannot_open_is_refused_naming_the_store()
    {
        // Found by a mutation test's new case: opening My at LocalMachine on Linux threw CryptographicException out of
        // the settings instead of naming the key.
        var e = Assert.Throws<InvalidSettingException>(() => BatchingTransportSettings.Create(ConfigurationFactory.ParseString(
            "enable-ssl = on\nssl.certificate { use-thumbprint-over-file = on, thumbprint = abc, store-name = my, store-location = local-machine }")));

        Assert.Equal("ssl.certificate.store-name", e.Key);
        Assert.Contains("a store this platform can open in LocalMachine", e.Message);
    }

    [Fact]
    public void Key_storage_flags_are_read_by_their_names_and_combined()
    {
        Assert.Equal(
            X509KeyStorageFlags.Exportable | X509KeyStorageFlags.MachineKeySet | X509KeyStorageFlags.PersistKeySet | X509KeyStorageFlags.UserKeySet | X509KeyStorageFlags.UserProtected,
            TlsSection.ParseFlags(["exportable", "machine-key-set", "persist-key-set", "user-key-set", "user-protected", "default-key-set", "exportable"]));
        Assert.Equal(X509KeyStorageFlags.DefaultKeySet, TlsSection.ParseFlags(null));
        var e = Assert.Throws<InvalidSettingException>(() => TlsSection.ParseFlags(["exportable", "shiny"]));
        Assert.Contains("default-key-set, exportable, machine-key-set, persist-key-set, user-key-set, user-protected", e.Allowed);
    }

    private static string SslSection(string pfxPath) =>
        $"enable-ssl = on\nssl.certificate {{ path = {Hocon.Quoted(pfxPath)}, password = {Hocon.Quoted(TestCertificateAuthority.Password)} }}";

    /// <summary>Every key of a HOCON object, dotted, such as <c>batching.flush-interval</c>.</summary>
    internal static IEnumerable<string> Flatten(IDictionary<string, HoconValue> items, string prefix) =>
        items.SelectMany(item => item.Value.IsObject()
            ? Flatten(item.Value.GetObject().Items, prefix + item.Key + ".")
            : [prefix + item.Key]);
}
