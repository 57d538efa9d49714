using System.Diagnostics;
using Akka.Actor;
using Akka.Event;
using FlushBatching.Akka.Tests.Support;
using FlushBatching.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// A drop-in starts wherever stock starts. Each value below is first given to a real stock 1.5.x node, which must serve
/// a stock peer both ways (asked by one, asking another); the same section then starts a node on each stack. Starts and
/// serves on stock, so starts and serves here, and a WARNING names the key where what applies differs from what was
/// written; refused by stock (or started and unable to serve), so refused here at start, naming the key. On the sockets
/// stack and on the DotNetty stack with each kind of event loop.
/// </summary>
/// <remarks>The oracle is stock itself, not a copy of its rules: a new Akka.NET that changes its mind turns a row red.</remarks>
public sealed class StockStartsHereTooTests : IAsyncLifetime
{
    private static readonly TimeSpan AskTimeout = TimeSpan.FromSeconds(5);

    private Node _asker = null!;
    private Node _asked = null!;

    /// <summary>
    /// The section's lines, the key that a WARNING (or the refusal) names, and whether the value written is what
    /// applies here (no WARNING then).
    /// </summary>
    public static TheoryData<string, string, bool> Values => new()
    {
        { "server-socket-worker-pool.pool-size-min = 4", "server-socket-worker-pool.pool-size-min", false },
        { "client-socket-worker-pool.pool-size-factor = 0", "client-socket-worker-pool.pool-size-factor", false },
        { "server-socket-worker-pool.pool-size-min = 0", "server-socket-worker-pool.pool-size-min", true },
        { "server-socket-worker-pool.pool-size-max = 2000", "server-socket-worker-pool.pool-size-max", true },
        { "client-socket-worker-pool.pool-size-factor = 4096", "client-socket-worker-pool.pool-size-factor", true },
        { "client-socket-worker-pool { pool-size-min = 3, pool-size-max = 2 }", "client-socket-worker-pool.pool-size-min", false },
        { "server-socket-worker-pool.pool-size-max = 0", "server-socket-worker-pool.pool-size-max", false },
        { "maximum-frame-size = 0b", "maximum-frame-size", false },
        { "maximum-frame-size = -1b", "maximum-frame-size", false },
        { "maximum-frame-size = 31999b", "maximum-frame-size", false },
        { "batching.flush-interval = 0s", "batching.flush-interval", false },
        { "batching.flush-interval = -40ms", "batching.flush-interval", false },
        { "batching.flush-interval = 2h", "batching.flush-interval", false },
        { "batching.flush-interval = soon", "batching.flush-interval", false },
        { "batching.max-pending-writes = 0", "batching.max-pending-writes", false },
        { "batching.max-pending-writes = -5", "batching.max-pending-writes", false },
        { "batching.max-pending-writes = 65537", "batching.max-pending-writes", false },
        { "batching.max-pending-writes = thirty", "batching.max-pending-writes", false },
        { "batching.max-pending-bytes = 0b", "batching.max-pending-bytes", false },
        { "batching.max-pending-bytes = -1k", "batching.max-pending-bytes", false },
        { "batching.max-pending-bytes = 65MiB", "batching.max-pending-bytes", false },
        { "batching.max-pending-bytes = 10x", "batching.max-pending-bytes", false },
        { "write-buffer-low-water-mark = 2m", "write-buffer-low-water-mark", false },
        { "write-buffer-high-water-mark = 64k\nwrite-buffer-low-water-mark = 64k", "write-buffer-low-water-mark", false },
        { "write-buffer-high-water-mark = -1b", "write-buffer-high-water-mark", false },
        { "write-buffer-high-water-mark = 4g", "write-buffer-high-water-mark", false },
        { "write-buffer-low-water-mark = -1b", "write-buffer-low-water-mark", false },
        { "send-buffer-size = -1b", "send-buffer-size", false },
        { "receive-buffer-size = 4g", "receive-buffer-size", false },
        { "backlog = -1", "backlog", false },
        { "backlog = 0", "backlog", true },
        { "connection-timeout = 0s", "connection-timeout", false },
        { "connection-timeout = -1s", "connection-timeout", false },
        { "connection-timeout = 2h", "connection-timeout", false },
        { "public-port = -1", "public-port", false },
        { "port = 70000", "port", false },
        { "byte-order = middle-endian", "byte-order", false },
        { "tcp-nodelay = sometimes", "tcp-nodelay", false },
        { "batching.enabled = maybe", "batching.enabled", false },
    };

    public async Task InitializeAsync()
    {
        _asker = Node.Start("asker", Node.Stock);
        _asked = Node.Start("asked", Node.Stock);
        _asked.System.ActorOf(Props.Create<Echo>(), "echo");
        await Task.CompletedTask;
    }

    public async Task DisposeAsync()
    {
        await _asker.DisposeAsync();
        await _asked.DisposeAsync();
    }

    [Theory]
    [MemberData(nameof(Values))]
    public async Task A_value_stock_starts_and_serves_with_starts_and_serves_here_with_a_warning_where_it_is_corrected(string section, string key, bool appliesAsWritten)
    {
        var stockServes = await StartsAndServes(Node.Stock, section, key, expectWarning: false) is { Started: true, Served: true };
        foreach (var (stack, loops) in new[] { (Node.BatchingTcp, ""), (Node.DotNettyBatching, ""), (Node.DotNettyBatching, "event-loop = dedicated\n") })
        {
            var here = await StartsAndServes(stack, loops + section, key, expectWarning: !appliesAsWritten);
            if (stockServes)
            {
                Assert.True(here.Started, $"{stack}: stock starts with '{section}', this stack refused it: {here.Refusal}");
                Assert.True(here.Served, $"{stack}: stock serves with '{section}', this stack did not");
                var warned = here.Warnings.Any(line => Names(line, key));
                Assert.True(warned != appliesAsWritten,
                    $"{stack}: '{section}' {(appliesAsWritten ? "applies as written, yet a WARNING named it" : "is corrected here, and no WARNING named it")}; warnings: {string.Join(" | ", here.Warnings)}");
            }
            else
            {
                Assert.False(here.Started, $"{stack}: stock does not serve with '{section}', and this stack started with it");
                Assert.Contains(key, here.Refusal);
            }
        }
    }

    private static bool Names(string line, string key) => line.Contains($"'{key} = ", StringComparison.Ordinal);

    // Akka's loggers hear of a line asynchronously: a WARNING logged at start may reach the node's log after the asks.
    // Where one is expected, the log is read once it is there (or the patience has passed); where none is, after the
    // asks, so a late one can only be missed, never invented.
    private async Task<Outcome> StartsAndServes(string transportClass, string section, string key, bool expectWarning)
    {
        Node node;
        try
        {
            node = Node.Start("row", transportClass, section);
        }
        catch (Exception e)
        {
            return new Outcome(false, false, [], string.Join(" <- ", Chain(e).Select(inner => inner.Message)));
        }

        await using (node)
        {
            List<string> Warnings() => node.Logs.Where(e => e.LogLevel() == LogLevel.WarningLevel).Select(e => e.ToString()!).ToList();
            node.System.ActorOf(Props.Create<Echo>(), "echo");
            try
            {
                // Asked by a stock peer, over a connection it accepts; then asking another, over one it opens.
                var echo = await node.Resolve(_asker, "echo");
                Assert.Equal("in", await echo.Ask<string>("in", AskTimeout));
                var theirs = await _asked.Resolve(node, "echo");
                Assert.Equal("out", await theirs.Ask<string>("out", AskTimeout));
            }
            catch (Exception e) when (e is not Xunit.Sdk.XunitException)
            {
                return new Outcome(true, false, Warnings(), "");
            }

            for (var waited = Stopwatch.StartNew(); expectWarning && !Warnings().Any(line => Names(line, key)) && waited.Elapsed < Poll.Patience;)
            {
                await Task.Delay(20);
            }

            return new Outcome(true, true, Warnings(), "");
        }
    }

    private static IEnumerable<Exception> Chain(Exception? e)
    {
        for (; e is not null; e = e.InnerException)
        {
            yield return e;
        }
    }

    private sealed record Outcome(bool Started, bool Served, IReadOnlyList<string> Warnings, string Refusal);
}
