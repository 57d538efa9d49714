using Akka.Configuration;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// Every key a transport section can hold, given a bad value in HOCON as a user writes it, refused through the path
/// the transport reads its section by, naming the key, the value and what is allowed. The one table of bad values:
/// the core's keys (batching, framing, sockets) are parsed by Akka's HOCON and checked by the core's settings.
/// </summary>
public sealed class SettingsValidationTests
{
    // Keys whose every value is allowed: names and a password.
    private static readonly string[] FreeText = ["hostname", "public-hostname", "ssl.certificate.password"];

    private const string Ssl = "enable-ssl = on\n";
    private const string Thumbprint = Ssl + "ssl.certificate { use-thumbprint-over-file = on, thumbprint = abc }\n";

    public static TheoryData<string, string, string, string> BadValues => new()
    {
        // HOCON, key, the value as written, part of what is allowed
        { "batching.enabled = maybe", "batching.enabled", "maybe", "on, off" },
        { "batching.max-pending-writes = 0", "batching.max-pending-writes", "0", "from 1 to 65536" },
        { "batching.max-pending-writes = 65537", "batching.max-pending-writes", "65537", "from 1 to 65536" },
        { "batching.max-pending-writes = thirty", "batching.max-pending-writes", "thirty", "whole number" },
        { "batching.max-pending-writes = 99999999999", "batching.max-pending-writes", "99999999999", "from 1 to 65536" },
        { "batching.max-pending-bytes = 0", "batching.max-pending-bytes", "0", "from 1b to 64m" },
        { "batching.max-pending-bytes = -1k", "batching.max-pending-bytes", "-1k", "from 1b to 64m" },
        { "batching.max-pending-bytes = 65MiB", "batching.max-pending-bytes", "65MiB", "from 1b to 64m" },
        { "batching.max-pending-bytes = 10x", "batching.max-pending-bytes", "10x", "a size such as" },
        { "batching.flush-interval = 0ms", "batching.flush-interval", "0ms", "above 0" },
        { "batching.flush-interval = -40ms", "batching.flush-interval", "-40ms", "a duration such as" },
        { "batching.flush-interval = 2h", "batching.flush-interval", "2h", "at most 1h" },
        { "batching.flush-interval = soon", "batching.flush-interval", "soon", "a duration such as" },
        { "maximum-frame-size = 31999b", "maximum-frame-size", "31999b", "from 32000b" },
        { "maximum-frame-size = 8g", "maximum-frame-size", "8g", "from 32000b" },
        { "byte-order = middle-endian", "byte-order", "middle-endian", "little-endian or big-endian" },
        { "tcp-nodelay = sometimes", "tcp-nodelay", "sometimes", "on, off" },
        { "tcp-keepalive = sometimes", "tcp-keepalive", "sometimes", "on, off" },
        { "tcp-nodelay { on = yes }", "tcp-nodelay", "(not a single value)", "on, off" },
        { "tcp-keepalive = [on, off]", "tcp-keepalive", "(not a single value)", "on, off" }, // Akka's GetString gives "" for both
        { "send-buffer-size = -1b", "send-buffer-size", "-1b", "from 0b" },
        { "receive-buffer-size = 4g", "receive-buffer-size", "4g", "from 0b" },
        { "backlog = -1", "backlog", "-1", "from 0 to 2147483647" },
        { "connection-timeout = 0s", "connection-timeout", "0s", "above 0" },
        { "write-buffer-high-water-mark = lots", "write-buffer-high-water-mark", "lots", "a size such as" },
        { "write-buffer-high-water-mark = 4g", "write-buffer-high-water-mark", "4g", "from 1b to 2147483647b" },
        { "write-buffer-high-water-mark = -1b", "write-buffer-high-water-mark", "-1b", "from 1b to 2147483647b" },
        { "write-buffer-low-water-mark = 4m",  "write-buffer-low-water-mark", "4m", "below write-buffer-high-water-mark" },
        { "port = 70000", "port", "70000", "from 0 to 65535" },
        { "port = ", "port", "", "whole number" }, // found by fuzzing: Akka's getter threw ArgumentNullException
        { "public-port = -1", "public-port", "-1", "from 0 to 65535" },
        { "dns-use-ipv6 = maybe", "dns-use-ipv6", "maybe", "on, off" },
        { "enable-ssl = yes-please", "enable-ssl", "yes-please", "on, off" },
        { Ssl + "ssl.certificate.path = /nonexistent.pfx", "ssl.certificate.path", "/nonexistent.pfx", "PKCS#12" },
        { Ssl + "ssl.certificate.use-thumbprint-over-file = perhaps", "ssl.certificate.use-thumbprint-over-file", "perhaps", "on, off" },
        { Ssl + "ssl.certificate { use-thumbprint-over-file = on, thumbprint = \"\" }", "ssl.certificate.thumbprint", "", "thumbprint" },
        { Thumbprint + "ssl.certificate.store-location = moon", "ssl.certificate.store-location", "moon", "current-user or local-machine" },
        { Thumbprint + "ssl.certificate.store-name = Drawer", "ssl.certificate.store-name", "Drawer", "empty, or one of AddressBook, AuthRoot" },
        { Thumbprint + "ssl.certificate.store-name = 99", "ssl.certificate.store-name", "99", "AddressBook" },
        { Ssl + "ssl.certificate { path = x.pfx, flags = [exportable, shiny] }", "ssl.certificate.flags", "shiny", "exportable" },
        { Ssl + "ssl.suppress-validation = sometimes", "ssl.suppress-validation", "sometimes", "on, off" },
        { Ssl + "ssl.require-mutual-authentication = 2", "ssl.require-mutual-authentication", "2", "on, off" },
        { Ssl + "ssl.validate-certificate-hostname = strict", "ssl.validate-certificate-hostname", "strict", "on, off" },
        { "server-socket-worker-pool.pool-size-min = 0", "server-socket-worker-pool.pool-size-min", "0", "from 1 to 1024" },
        { "server-socket-worker-pool.pool-size-factor = lots", "server-socket-worker-pool.pool-size-factor", "lots", "number" },
        { "server-socket-worker-pool.pool-size-factor = ", "server-socket-worker-pool.pool-size-factor", "", "number" },
        { "server-socket-worker-pool.pool-size-max = 2000", "server-socket-worker-pool.pool-size-max", "2000", "to 1024" },
        { "client-socket-worker-pool.pool-size-min = many", "client-socket-worker-pool.pool-size-min", "many", "whole number" },
        { "client-socket-worker-pool.pool-size-factor = -1", "client-socket-worker-pool.pool-size-factor", "-1", "number" },
        { "client-socket-worker-pool.pool-size-factor = 0", "client-socket-worker-pool.pool-size-factor", "0", "above 0 and at most 1024" },
        { "client-socket-worker-pool.pool-size-factor = 1024.5", "client-socket-worker-pool.pool-size-factor", "1024.5", "above 0 and at most 1024" },
        { "client-socket-worker-pool { pool-size-min = 3, pool-size-max = 2 }", "client-socket-worker-pool.pool-size-max", "2", "from client-socket-worker-pool.pool-size-min (3) to 1024" },
        { "server-socket-worker-pool.pool-size-min = 3", "server-socket-worker-pool.pool-size-min", "3", "from 1 to server-socket-worker-pool.pool-size-max (2); raise" },
        { "server-socket-worker-pool.pool-size-max = 1", "server-socket-worker-pool.pool-size-max", "1", "from server-socket-worker-pool.pool-size-min (2) to 1024" },
        { "event-loop = fibers", "event-loop", "fibers", "thread-pool or dedicated" },
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
