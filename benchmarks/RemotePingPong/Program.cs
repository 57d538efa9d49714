using System.CommandLine;
using System.Runtime.InteropServices;
using System.Text.Json;
using FlushBatching;
using FlushBatching.Batching;
using FlushBatching.Benchmarks.Shared;
using FlushBatching.Tcp;
using RemotePingPong;

var transportOption = ListOptions.Words(
    "--transport", "Transports to run, interleaved row by row (comma-separated).", TransportUnderTest.Names, TransportUnderTest.Names);
var clientsOption = ListOptions.Numbers("--clients", "Client counts, one row each (comma-separated).", [1, 5, 10, 15, 20, 25, 30]);
var messagesOption = new Option<int>("--messages") { Description = "Messages each client sends (and gets back).", DefaultValueFactory = _ => 100_000 };
var repeatOption = new Option<int>("--repeat") { Description = "Runs per row; the table shows the median and the spread.", DefaultValueFactory = _ => 1 };
var payloadOption = new Option<int>("--payload") { Description = "Bytes per message (a byte array).", DefaultValueFactory = _ => 100 };
var setOption = new Option<string[]>("--set")
{
    Description = "A HOCON override for this project's transports, such as batching.max-pending-writes=64. Repeatable.",
    AllowMultipleArgumentsPerToken = false,
};
var latencyOption = new Option<bool>("--latency") { Description = "Also measure round trips at one message in flight: p50/p90/p99/max per transport." };
var roundTripsOption = new Option<int>("--round-trips") { Description = "Round trips for --latency.", DefaultValueFactory = _ => 20_000 };
var quickOption = new Option<bool>("--quick") { Description = "A preset that covers every transport and the latency mode in well under a minute: --clients 1,10 --messages 20000 --latency --round-trips 2000." };
var jsonOption = new Option<FileInfo?>("--json") { Description = "Also write every row, the latency percentiles and the sweep to this JSON file." };
var sweepOption = new Option<bool>("--sweep") { Description = "Tune: run flushbatching at every combination of the three lists below, each beside stock, and print the best." };
var sweepWritesOption = ListOptions.Values("--max-pending-writes", "Sweep values of batching.max-pending-writes (default 10,30,100).");
var sweepBytesOption = ListOptions.Values("--max-pending-bytes", "Sweep values of batching.max-pending-bytes (default 16k,64k).");
var sweepIntervalOption = ListOptions.Values("--flush-interval", "Sweep values of batching.flush-interval (default 40ms).");

var root = new RootCommand(
    "RemotePingPong: two ActorSystems on 127.0.0.1, remote-deployed echo actors and as many local clients, each keeping 50 messages in flight. msgs/sec = 2 x clients x messages / elapsed. Every message must come back, or the run fails.")
{
    transportOption, clientsOption, messagesOption, repeatOption, payloadOption, setOption, latencyOption, roundTripsOption, quickOption, jsonOption,
    sweepOption, sweepWritesOption, sweepBytesOption, sweepIntervalOption,
};

root.SetAction(async (parse, _) =>
{
    var quick = parse.GetValue(quickOption);
    var clientCounts = quick ? [1, 10] : parse.GetValue(clientsOption)!;
    var messages = quick ? 20_000 : parse.GetValue(messagesOption);
    var latency = quick || parse.GetValue(latencyOption);
    var roundTrips = quick ? 2_000 : parse.GetValue(roundTripsOption);
    var repeat = parse.GetValue(repeatOption);
    var payload = parse.GetValue(payloadOption);
    if (messages < 1 || repeat < 1 || payload < 1 || roundTrips < 1)
    {
        Console.Error.WriteLine("--messages, --repeat, --payload and --round-trips must be at least 1.");
        return 2;
    }

    string section;
    try
    {
        section = Section(parse.GetValue(setOption) ?? []);
    }
    catch (Exception e) when (e is InvalidSettingException or FormatException)
    {
        Console.Error.WriteLine(e.Message);
        return 2;
    }

    var transports = parse.GetValue(transportOption)!.Distinct().Select(name => TransportUnderTest.Create(name, section)).ToArray();
    Console.WriteLine($"RemotePingPong: {Environment.ProcessorCount} cores, {RuntimeInformation.OSDescription}, {RuntimeInformation.FrameworkDescription}");
    Console.WriteLine($"{PingPongRun.InFlight} in flight per client, {messages} messages per client, {payload} B payload, {repeat} run(s) per row");
    if (section.Length > 0)
    {
        Console.WriteLine($"this project's transports: {section}");
    }

    using var counter = new FrameCounter();
    var report = new Report();
    try
    {
        // Warm up every transport once so tiered compilation and pools settle before anything is measured.
        foreach (var transport in transports)
        {
            await PingPongRun.ThroughputAsync(transport, 2, Math.Min(messages, 5_000), payload, counter);
        }

        if (parse.GetValue(sweepOption))
        {
            var grid = Grid(
                parse.GetValue(sweepWritesOption) is { Length: > 0 } w ? w : ["10", "30", "100"],
                parse.GetValue(sweepBytesOption) is { Length: > 0 } b ? b : ["16k", "64k"],
                parse.GetValue(sweepIntervalOption) is { Length: > 0 } i ? i : ["40ms"]);
            await Sweep.RunAsync(grid, section, clientCounts, messages, repeat, payload, counter, report);
        }
        else
        {
            await Throughput(transports, clientCounts, messages, repeat, payload, counter, report);
        }

        if (latency)
        {
            Console.WriteLine();
            Console.WriteLine($"Latency: 1 client, 1 message in flight, {roundTrips} round trips");
            Console.WriteLine($"{"Transport",-24}{"p50 [us]",10}{"p90 [us]",10}{"p99 [us]",10}{"max [us]",10}");
            foreach (var transport in transports)
            {
                var result = await PingPongRun.LatencyAsync(transport, roundTrips, payload);
                report.Latency.Add(result);
                Console.WriteLine($"{result.Transport,-24}{result.P50Us,10:N0}{result.P90Us,10:N0}{result.P99Us,10:N0}{result.MaxUs,10:N0}");
            }
        }
    }
    catch (Exception e) when (e is TimeoutException or InvalidSettingException)
    {
        Console.Error.WriteLine($"error: {e.Message}");
        return 1;
    }

    if (parse.GetValue(jsonOption) is { } json)
    {
        await File.WriteAllTextAsync(json.FullName, JsonSerializer.Serialize(report, new JsonSerializerOptions { WriteIndented = true }));
        Console.WriteLine($"wrote {json.FullName}");
    }

    return 0;
});

return await root.Parse(args).InvokeAsync();

static async Task Throughput(TransportUnderTest[] transports, int[] clientCounts, int messages, int repeat, int payload, FrameCounter counter, Report report)
{
    var runs = transports.Length * clientCounts.Length * repeat;
    var done = 0;
    foreach (var clients in clientCounts)
    {
        for (var r = 0; r < repeat; r++)
        {
            foreach (var transport in transports)
            {
                var row = await PingPongRun.ThroughputAsync(transport, clients, messages, payload, counter);
                report.Rows.Add(row);
                Console.Error.WriteLine($"[{++done}/{runs}] {row.Transport} at {clients} clients: {row.MsgsPerSec:N0} msgs/sec");
            }
        }
    }

    foreach (var transport in transports)
    {
        Console.WriteLine();
        Console.WriteLine($"== {transport.Name} ==");
        Console.WriteLine($"Num clients, Total [msg], Msgs/sec, Total [ms], Spread [msgs/sec], vs stock, Frames/send{(transport.IsFlushBatching ? ", Flushes by reason (all runs)" : "")}");
        foreach (var clients in clientCounts)
        {
            var rows = report.Rows.Where(row => row.Transport == transport.Name && row.Clients == clients).ToList();
            var median = Median(rows.Select(row => row.MsgsPerSec));
            var stock = report.Rows.Where(row => row.Transport == TransportUnderTest.Stock && row.Clients == clients).Select(row => row.MsgsPerSec).ToList();
            var ratio = stock.Count > 0 ? $"{median / Median(stock):N2}x" : "-";
            var framesPerSend = rows.Select(row => row.FramesPerSend).OfType<double>().ToList();
            Console.WriteLine(
                $"{clients}, {rows[0].Messages}, {median:N0}, {Median(rows.Select(row => row.ElapsedMs)):N0}, " +
                $"{rows.Min(row => row.MsgsPerSec):N0}-{rows.Max(row => row.MsgsPerSec):N0}, {ratio}, " +
                $"{(framesPerSend.Count > 0 ? Median(framesPerSend).ToString("N1") : "-")}{Reasons(rows)}");
        }
    }
}

static double Median(IEnumerable<double> values) => Sweep.Median(values);

// Flush reasons summed over a row's runs, in shares: what ended the batches.
static string Reasons(List<RowResult> rows)
{
    var totals = rows.SelectMany(row => row.FlushesByReason ?? []).GroupBy(f => f.Key).ToDictionary(g => g.Key, g => g.Sum(f => f.Value));
    var all = totals.Values.Sum();
    return all == 0 ? "" : ", " + string.Join(" ", totals.OrderByDescending(t => t.Value).Select(t => $"{t.Key} {100.0 * t.Value / all:N0}%"));
}

static string Section(IEnumerable<string> assignments)
{
    var lines = new List<string>();
    foreach (var assignment in assignments)
    {
        var parts = assignment.Split('=', 2, StringSplitOptions.TrimEntries);
        if (parts.Length != 2 || parts[0].Length == 0)
        {
            throw new FormatException($"--set takes key=value, not '{assignment}'.");
        }

        if (parts[0].StartsWith(ConnectionSettings.BatchingPrefix, StringComparison.Ordinal) || ConnectionSettings.Keys.Contains(parts[0]))
        {
            ConnectionSettings.Default.With(parts[0], parts[1]); // a bad value fails here, naming the key
        }

        lines.Add($"{parts[0]} = \"{parts[1]}\"");
    }

    return string.Join(Environment.NewLine, lines);
}

static List<(string Writes, string Bytes, string Interval)> Grid(string[] writes, string[] bytes, string[] intervals)
{
    // Check every value before running anything: a typo fails at once, naming the key.
    foreach (var w in writes)
    {
        BatchingSettings.Default.With(BatchingSettings.MaxPendingWritesKey, w);
    }

    foreach (var b in bytes)
    {
        BatchingSettings.Default.With(BatchingSettings.MaxPendingBytesKey, b);
    }

    foreach (var i in intervals)
    {
        BatchingSettings.Default.With(BatchingSettings.FlushIntervalKey, i);
    }

    return [.. from w in writes from b in bytes from i in intervals select (w, b, i)];
}
