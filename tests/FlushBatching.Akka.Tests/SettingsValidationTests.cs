using Akka.Configuration;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// Every key a transport section can hold, given a bad value in HOCON as a user writes it, refused through the path
/// the transport reads its section by, naming the key, the value and what is allowed. The one table of bad values:
/// the core's keys (batching, framing, sockets) are parsed by Akka's HOCON and checked by the core's settings.
/// </summary>
public sealed class SettingsValidationTests
{
    // Keys whose every value is allowed: names and a password, any store name (as stock opens it), and the two batching
    // keys stock never reads, whose values this transport corrects (StockStartsHereTooTests).
    // Before Akka.NET 1.5.75, common-name is read by nothing, as stock reads it: every value is allowed there.
    private static readonly string[] FreeText =
        ["hostname", "public-hostname", "ssl.certificate.password", "ssl.certificate.store-name", "batching.max-pending-bytes", "batching.flush-interval",
#if !AKKA_1_5_75
        "ssl.certificate.common-name",
#endif
        ];

    private const string Ssl = "enable-ssl = on\n";
    private const string Thumbprint = Ssl + "ssl.certificate { use-thumbprint-over-file = on, thumbprint = abc }\n";

    public static TheoryData<string, string, string, string> BadValues => new()
    {
        // HOCON, key, the value as written, part of what is allowed
        { "batching.enabled = maybe", "batching.enabled", "maybe", "on, off" },
        { "batching.max-pending-writes = thirty", "batching.max-pending-writes", "thirty", "whole number" },
        { "maximum-frame-size = 31999b", "maximum-frame-size", "31999b", "from 32000b" },
        { "maximum-frame-size = 8g", "maximum-frame-size", "8g", "from 32000b" },
        { "byte-order = middle-endian", "byte-order", "middle-endian", "little-endian or big-endian" },
        { "tcp-nodelay = sometimes", "tcp-nodelay", "sometimes", "on, off" },
        { "tcp-keepalive = sometimes", "tcp-keepalive", "sometimes", "on, off" },
        { "tcp-nodelay { on = yes }", "tcp-nodelay", "(not a single value)", "on, off" },
        { "tcp-keepalive = [on, off]", "tcp-keepalive", "(not a single value)", "on, off" }, // Akka's GetString gives "" for both
        { "connection-timeout = 0s", "connection-timeout", "0s", "above 0" },
        { "write-buffer-high-water-mark = lots", "write-buffer-high-water-mark", "lots", "a size such as" },
        { "port = 70000", "port", "70000", "from 0 to 65535" },
        { "port = ", "port", "", "whole number" }, // found by fuzzing: Akka's getter threw ArgumentNullException
        { "dns-use-ipv6 = maybe", "dns-use-ipv6", "maybe", "on, off" },
        { "enable-ssl = yes-please", "enable-ssl", "yes-please", "on, off" },
        { Ssl + "ssl.certificate.path = /nonexistent.pfx", "ssl.certificate.path", "/nonexistent.pfx", "PKCS#12" },
#if AKKA_1_5_75
        { Ssl + "ssl.certificate.common-name = no-such-node", "ssl.certificate.common-name", "no-such-node", "a source with a certificate in date" },
#endif
        { Ssl + "ssl.certificate.use-thumbprint-over-file = perhaps", "ssl.certificate.use-thumbprint-over-file", "perhaps", "on, off" },
        { Ssl + "ssl.certificate { use-thumbprint-over-file = on, thumbprint = \"\" }", "ssl.certificate.thumbprint", "", "thumbprint" },
        { Thumbprint + "ssl.certificate.store-location = moon", "ssl.certificate.store-location", "moon", "current-user or local-machine" },
        { Ssl + "ssl.certificate { path = x.pfx, flags = [exportable, shiny] }", "ssl.certificate.flags", "shiny", "exportable" },
        { Ssl + "ssl.suppress-validation = sometimes", "ssl.suppress-validation", "sometimes", "on, off" },
        { Ssl + "ssl.require-mutual-authentication = 2", "ssl.require-mutual-authentication", "2", "on, off" },
        { Ssl + "ssl.validate-certificate-hostname = strict", "ssl.validate-certificate-hostname", "strict", "on, off" },
        { "server-socket-worker-pool.pool-size-factor = lots", "server-socket-worker-pool.pool-size-factor", "lots", "number" },
        { "server-socket-worker-pool.pool-size-factor = ", "server-socket-worker-pool.pool-size-factor", "", "number" },
        { "client-socket-worker-pool.pool-size-min = many", "client-socket-worker-pool.pool-size-min", "many", "whole number" },
        { "server-socket-worker-pool.pool-size-max = 0", "server-socket-worker-pool.pool-size-max", "0", "a pool of no event loop serves no connection" },
        { "client-socket-worker-pool { pool-size-min = 0, pool-size-factor = 0 }", "client-socket-worker-pool.pool-size-min", "0", "scales no loop" },
        { "server-socket-worker-pool.pool-size-min = lots", "server-socket-worker-pool.pool-size-min", "lots", "whole number" },
        { "client-socket-worker-pool.pool-size-factor = lots", "client-socket-worker-pool.pool-size-factor", "lots", "number" },
        { "client-socket-worker-pool.pool-size-max = many", "client-socket-worker-pool.pool-size-max", "many", "whole number" },
        { "send-buffer-size = lots", "send-buffer-size", "lots", "a size such as" },
        { "receive-buffer-size = lots", "receive-buffer-size", "lots", "a size such as" },
        { "backlog = lots", "backlog", "lots", "whole number" },
        { "backlog = 99999999999", "backlog", "99999999999", "from 0 to 2147483647" },
        { "write-buffer-low-water-mark = lots", "write-buffer-low-water-mark", "lots", "a size such as" },
        { "public-port = 70000", "public-port", "70000", "from 0 to 65535" },
        { "connection-timeout = soon", "connection-timeout", "soon", "a duration such as" },
        { "event-loop = fibers", "event-loop", "fibers", "thread-pool or dedicated" },
        { "max-inbound-connections = lots", "max-inbound-connections", "lots", "auto, unbounded, 0, or a whole number from 1" },
        { "max-inbound-connections = -1", "max-inbound-connections", "-1", "auto, unbounded, 0, or a whole number from 1" },
    };

    [Theory]
    [MemberData(nameof(BadValues))]
    public void A_bad_value_is_refused_naming_the_key_the_value_and_what_is_allowed(string hocon, string key, string value, string allowed)
    {
        var e = Assert.Throws<InvalidSettingException>(() => BatchingTransportSettings.Create(ConfigurationFactory.ParseString(hocon)));

        Assert.Equal(key, e.Key);
        Assert.Equal(value, e.Value);
        Assert.Contains(allowed, e.Allowed);
        Assert.StartsWith($"Invalid value '{value}' for '{key}': allowed is ", e.Message);
    }

    [Theory]
    [InlineData(100_000)] // stock passes it to the socket, and the operating system caps it: so does this transport
    [InlineData(0)]
    public void A_backlog_stock_starts_with_is_taken_as_it_is(int backlog)
    {
        var settings = BatchingTransportSettings.Create(ConfigurationFactory.ParseString($"backlog = {backlog}"));

        Assert.Equal(backlog, settings.Connection.Backlog);
    }

    [Fact]
    public void Every_key_of_reference_conf_that_refuses_a_value_has_a_row_in_the_table()
    {
        var keys = BatchingTransportSettingsTests.Flatten(BatchingTransportSettings.Reference.Root.GetObject().Items, "").Except(FreeText);
        var tested = BadValues.Select(row => (string)row[1]).ToHashSet();

        var untested = keys.Where(key => !tested.Contains(key)).ToList();
        Assert.True(untested.Count == 0, $"No bad value in the table for: {string.Join(", ", untested)}");
    }
}
