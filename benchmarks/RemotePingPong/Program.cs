using System.CommandLine;
using Akka.Actor;
using Akka.Configuration;
using System.Text.Json;
using FlushBatching;
using FlushBatching.Akka;
using FlushBatching.Benchmarks.Shared;
using FlushBatching.Tests.Support;
using RemotePingPong;
using RemotePingPong.ManyPeers;
using RemotePingPong.OpenLoop;
using RemotePingPong.Soak;

const int WarmUpClients = 5;

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
var quickOption = new Option<bool>("--quick") { Description = "A preset that covers every transport and the latency mode in well under a minute: --clients 1,10 --messages 20000 --latency --round-trips 2000 --warm-up-limit 0." };
var jsonOption = new Option<FileInfo?>("--json") { Description = "Also write every row, the latency percentiles and the sweep to this JSON file." };
var sweepOption = new Option<bool>("--sweep") { Description = "Tune: run flushbatching at every combination of the three lists below, each beside stock, and print the best." };
var sweepWritesOption = ListOptions.Values("--max-pending-writes", "Sweep values of batching.max-pending-writes (default 10,30,100).");
var sweepBytesOption = ListOptions.Values("--max-pending-bytes", "Sweep values of batching.max-pending-bytes (default 16k,64k).");
var sweepIntervalOption = ListOptions.Values("--flush-interval", "Sweep values of batching.flush-interval (default 40ms).");
var roleOption = new Option<string>("--role")
{
    Description = "local: both ActorSystems in this process (the default). server: serve echo systems to clients in other processes or on other hosts, until Ctrl+C. client: run the rows against a server (--server). peers: what --peers starts, not run by hand.",
    DefaultValueFactory = _ => "local",
};
roleOption.AcceptOnlyFromAmong("local", "server", "client", "peers");
var serverOption = new Option<string?>("--server") { Description = "With --role client: the address the server printed, such as akka.tcp://pingpong-server@10.0.0.5:4055." };
var serverTransportOption = new Option<string?>("--server-transport")
{
    Description = $"With --role client: the transport of the server's echo systems for every row ({string.Join(", ", TransportUnderTest.ServerNames)}); by default the same as the clients' row by row.",
};
serverTransportOption.AcceptOnlyFromAmong(TransportUnderTest.ServerNames);
var hostnameOption = new Option<string>("--hostname") { Description = "The address this process binds (both roles); another host must reach it.", DefaultValueFactory = _ => "127.0.0.1" };
var publicHostnameOption = new Option<string>("--public-hostname") { Description = "The address others reach this process by, when it differs from --hostname (such as --hostname 0.0.0.0).", DefaultValueFactory = _ => "" };
var soakOption = new Option<int>("--soak")
{
    Description = "With --role client: a soak of this many minutes instead of the rows: steady load on the first --transport with the last --clients count, connections re-made every --soak-cycle minutes, both processes sampled every --sample-every seconds; fails when a holding grows. benchmarks/soak.sh runs it.",
};
var soakCycleOption = new Option<int>("--soak-cycle") { Description = "With --soak: minutes between dropping the client side's connections and making new ones.", DefaultValueFactory = _ => 3 };
var sampleEveryOption = new Option<int>("--sample-every") { Description = "With --soak: seconds between samples.", DefaultValueFactory = _ => 60 };
var tlsOption = new Option<bool>("--tls") { Description = "With --soak: both sides over TLS, with a self-signed certificate made for the run." };
var openLoopOption = ListOptions.Numbers(
    "--open-loop", "Instead of the closed-loop rows: offer these rates (round trips per second, all clients together) whatever comes back, and report latency from each message's due time.", []);
var openLoopSecondsOption = new Option<int>("--open-loop-seconds") { Description = "With --open-loop: seconds each rate is offered.", DefaultValueFactory = _ => 10 };
var p99BoundOption = new Option<double>("--p99-bound-ms") { Description = "With --open-loop: the p99 a rate must stay under to count as sustained at that bound.", DefaultValueFactory = _ => 5 };
var warmUpLimitOption = new Option<int>("--warm-up-limit")
{
    Description = "Seconds of warm-up rounds at most, before rows are measured: rounds go on until the JIT is quiet (see WarmUp.cs) or this passes. 0 runs one round.",
    DefaultValueFactory = _ => 90,
};
var inFlightOption = new Option<int>("--in-flight") { Description = "Messages each client keeps in flight.", DefaultValueFactory = _ => PingPongRun.InFlight };
var frameSizeOption = new Option<string?>("--maximum-frame-size")
{
    Description = "maximum-frame-size for every transport, stock included, on both sides, as a user raises it for large messages (such as 2MB).",
};
var peersOption = ListOptions.Numbers(
    "--peers",
    $"Instead of the rows: a hub node in this process and, step by step, this many peer ActorSystems in other processes ({ManyPeersRun.PeersPerProcess} each), each pinged by the hub once a second; reports what the hub holds and spends per association and its round trips. With --role peers: how many peer systems to run.",
    []);
var peersWindowOption = new Option<int>("--peers-window") { Description = "With --peers: seconds the hub's CPU and round trips are measured, every peer up.", DefaultValueFactory = _ => 10 };
var hubOption = new Option<string?>("--hub") { Description = "With --role peers: the hub's address." };
var portOption = new Option<int>("--port") { Description = "With --role server: the port clients reach the server on.", DefaultValueFactory = _ => 4055 };

var root = new RootCommand(
    "RemotePingPong: two ActorSystems on 127.0.0.1, remote-deployed echo actors and as many local clients, each keeping 50 messages in flight. msgs/sec = 2 x clients x messages / elapsed. Every message must come back, or the run fails.")
{
    transportOption, clientsOption, messagesOption, repeatOption, payloadOption, setOption, latencyOption, roundTripsOption, quickOption, jsonOption,
    sweepOption, sweepWritesOption, sweepBytesOption, sweepIntervalOption, roleOption, serverOption, serverTransportOption, hostnameOption,
    publicHostnameOption, portOption, inFlightOption, frameSizeOption, peersOption, peersWindowOption, hubOption, soakOption, soakCycleOption, sampleEveryOption, tlsOption, openLoopOption, openLoopSecondsOption, p99BoundOption,
    warmUpLimitOption,
};

root.SetAction(async (parse, _) =>
{
    var role = parse.GetValue(roleOption)!;
    var hostname = parse.GetValue(hostnameOption)!;
    var publicHostname = parse.GetValue(publicHostnameOption)!;
    if (role == "server")
    {
        return await ServerRole.RunAsync(hostname, publicHostname, parse.GetValue(portOption));
    }

    if (role == "client" && parse.GetValue(serverOption) is null)
    {
        Console.Error.WriteLine("--role client needs --server, the address the server printed.");
        return 2;
    }

    var soakMinutes = parse.GetValue(soakOption);
    if (soakMinutes != 0 && (role != "client" || soakMinutes < 0 || parse.GetValue(soakCycleOption) < 1 || parse.GetValue(sampleEveryOption) < 1))
    {
        Console.Error.WriteLine("--soak takes --role client and a positive number of minutes; --soak-cycle and --sample-every must be at least 1.");
        return 2;
    }

    if (parse.GetValue(tlsOption) && soakMinutes == 0)
    {
        Console.Error.WriteLine("--tls is only for --soak: the other modes measure the transports as they are configured with --set.");
        return 2;
    }

    PingPongRun.ClientHostname = hostname;
    var quick = parse.GetValue(quickOption);
    var clientCounts = quick ? [1, 10] : parse.GetValue(clientsOption)!;
    var messages = quick ? 20_000 : parse.GetValue(messagesOption);
    var latency = quick || parse.GetValue(latencyOption);
    var roundTrips = quick ? 2_000 : parse.GetValue(roundTripsOption);
    var repeat = parse.GetValue(repeatOption);
    var payload = parse.GetValue(payloadOption);
    PingPongRun.InFlight = parse.GetValue(inFlightOption);
    WarmUp.Limit = TimeSpan.FromSeconds(quick ? 0 : parse.GetValue(warmUpLimitOption));
    if (messages < 1 || repeat < 1 || payload < 1 || roundTrips < 1 || PingPongRun.InFlight < 1 || WarmUp.Limit < TimeSpan.Zero)
    {
        Console.Error.WriteLine("--messages, --repeat, --payload, --round-trips and --in-flight must be at least 1, --warm-up-limit at least 0.");
        return 2;
    }

    string section;
    var shared = "";
    List<(string Writes, string Bytes, string Interval)>? grid = null;
    using var certificate = parse.GetValue(tlsOption) ? new SelfSignedCertificate() : null;
    try
    {
        section = Section(parse.GetValue(setOption) ?? []);
        if (parse.GetValue(frameSizeOption) is { } frameSize)
        {
            shared = Section([$"maximum-frame-size={frameSize}"]);
        }

        if (certificate is not null)
        {
            section += Environment.NewLine + SoakRun.TlsSection(certificate);
        }

        if (parse.GetValue(sweepOption))
        {
            grid = Grid(
                parse.GetValue(sweepWritesOption) is { Length: > 0 } w ? w : ["10", "30", "100"],
                parse.GetValue(sweepBytesOption) is { Length: > 0 } b ? b : ["16k", "64k"],
                parse.GetValue(sweepIntervalOption) is { Length: > 0 } i ? i : ["40ms"]);
        }
    }
    catch (Exception e) when (e is InvalidSettingException or FormatException)
    {
        Console.Error.WriteLine(e.Message);
        return 2;
    }

    var transports = parse.GetValue(transportOption)!.Distinct().Select(name => TransportUnderTest.Create(name, section, shared)).ToArray();
    var peerSteps = parse.GetValue(peersOption)!;
    if (role == "peers")
    {
        return parse.GetValue(hubOption) is { } hub && transports.Length == 1 && peerSteps.Length == 1 && peerSteps[0] > 0
            ? await PeersRole.RunAsync(hub, transports[0], hostname, peerSteps[0])
            : Fail("--role peers takes --hub, one --transport and one --peers count.");
    }

    Console.WriteLine($"RemotePingPong: {Report.ThisMachine}");
    Console.WriteLine(soakMinutes > 0
        ? $"soak: {PingPongRun.InFlight} in flight per client, {clientCounts[^1]} clients, {payload} B payload, {soakMinutes} minutes"
        : $"{PingPongRun.InFlight} in flight per client, {messages} messages per client, {payload} B payload, {repeat} run(s) per row");
    if (section.Length > 0)
    {
        Console.WriteLine($"this project's transports: {section}");
    }

    ActorSystem? control = null;
    EchoHost echoes = new InProcessEchoHost();
    if (role == "client")
    {
        control = ActorSystem.Create("pingpong-control", PingPongRun.Config(TransportUnderTest.Create(TransportUnderTest.Stock, ""), hostname, publicHostname));
        try
        {
            echoes = await RemoteEchoHost.ConnectAsync(control, parse.GetValue(serverOption)!, parse.GetValue(serverTransportOption), section, shared);
        }
        catch (Exception e) when (e is ActorNotFoundException or TimeoutException or FormatException or UriFormatException)
        {
            Console.Error.WriteLine($"error: no RemotePingPong server answered at {parse.GetValue(serverOption)} ({e.Message}).");
            await control.Terminate();
            return 1;
        }
    }

    Console.WriteLine(echoes.Description);
    if (soakMinutes > 0)
    {
        try
        {
            var soak = await SoakRun.RunAsync(
                (RemoteEchoHost)echoes, transports[0], certificate is not null, clientCounts[^1], payload, TimeSpan.FromMinutes(soakMinutes),
                TimeSpan.FromMinutes(parse.GetValue(soakCycleOption)), TimeSpan.FromSeconds(parse.GetValue(sampleEveryOption)));
            soak.Print();
            if (parse.GetValue(jsonOption) is { } soakJson)
            {
                await File.WriteAllTextAsync(soakJson.FullName, JsonSerializer.Serialize(soak, new JsonSerializerOptions { WriteIndented = true }));
                Console.WriteLine($"wrote {soakJson.FullName}");
            }

            return soak.Failed ? 1 : 0;
        }
        catch (Exception e) when (e is TimeoutException or AskTimeoutException or ActorNotFoundException)
        {
            Console.Error.WriteLine($"error: {e.Message}");
            return 1;
        }
        finally
        {
            await control!.Terminate();
        }
    }

    using var counter = new FrameCounter();
    var report = new Report { Payload = payload, InFlight = PingPongRun.InFlight };
    var openLoopRates = parse.GetValue(openLoopOption)!;
    try
    {
        if (peerSteps.Length > 0)
        {
            string[] passOn = [.. (parse.GetValue(setOption) ?? []).SelectMany(set => new[] { "--set", set }),
                .. parse.GetValue(frameSizeOption) is { } size ? ["--maximum-frame-size", size] : Array.Empty<string>()];
            await ManyPeers([.. transports.Where(t => !t.InProcessOnly)], peerSteps, TimeSpan.FromSeconds(parse.GetValue(peersWindowOption)), repeat, passOn, report);
            return await WriteJson(report);
        }

        if (openLoopRates.Length > 0)
        {
            await OpenLoop(echoes, [.. transports.Where(t => !t.InProcessOnly)], clientCounts[^1], openLoopRates, TimeSpan.FromSeconds(parse.GetValue(openLoopSecondsOption)),
                parse.GetValue(p99BoundOption), repeat, payload, counter, report);
            return await WriteJson(report);
        }

        // Warm up every transport so tiered compilation, the thread pool and buffer pools settle before anything is
        // measured: without it the rows run while the JIT is still at work (see WarmUp).
        var warmUpMessages = Math.Min(messages, 10_000);
        Console.WriteLine($"warm-up: rounds of {WarmUpClients} clients x {warmUpMessages} messages on every transport, not counted");
        await WarmUp.UntilJitQuietAsync(async () =>
        {
            foreach (var transport in transports)
            {
                await PingPongRun.ThroughputAsync(echoes, transport, WarmUpClients, warmUpMessages, payload, counter);
            }
        });

        if (grid is not null)
        {
            await Sweep.RunAsync(echoes, grid, section, clientCounts, messages, repeat, payload, counter, report);
        }
        else
        {
            await Throughput(echoes, transports, clientCounts, messages, repeat, payload, counter, report);
        }

        if (latency)
        {
            await Latency(echoes, transports, roundTrips, repeat, payload, report);
        }
    }
    catch (Exception e) when (e is TimeoutException or InvalidSettingException or AskTimeoutException)
    {
        Console.Error.WriteLine($"error: {e.Message}");
        return 1;
    }
    finally
    {
        if (control is not null)
        {
            await control.Terminate();
        }
    }

    return await WriteJson(report);

    async Task<int> WriteJson(Report report)
    {
        if (parse.GetValue(jsonOption) is { } json)
        {
            await File.WriteAllTextAsync(json.FullName, JsonSerializer.Serialize(report, new JsonSerializerOptions { WriteIndented = true }));
            Console.WriteLine($"wrote {json.FullName}");
        }

        return 0;
    }
});

return await root.Parse(args).InvokeAsync();

static async Task Throughput(EchoHost echoes, TransportUnderTest[] transports, int[] clientCounts, int messages, int repeat, int payload, FrameCounter counter, Report report)
{
    var runs = transports.Length * clientCounts.Length * repeat;
    var done = 0;
    foreach (var clients in clientCounts)
    {
        for (var r = 0; r < repeat; r++)
        {
            foreach (var transport in transports)
            {
                var row = await PingPongRun.ThroughputAsync(echoes, transport, clients, messages, payload, counter);
                report.Rows.Add(row);
                Console.Error.WriteLine($"[{++done}/{runs}] {row.Transport} at {clients} clients: {row.MsgsPerSec:N0} msgs/sec, {row.CpuUsPerMessage:N2} us CPU/msg");
            }
        }
    }

    Console.WriteLine();
    var twoProcesses = report.Rows.Any(row => row.Processes == 2);
    Console.WriteLine($"Medians of {repeat} run(s); CV = coefficient of variation across runs; CPU, Alloc and GCs: {(twoProcesses ? "both processes, summed" : "this process (both systems)")}");
    if (twoProcesses)
    {
        Console.WriteLine("Frames/send and flushes: this process's (the clients') connections only");
    }
    foreach (var transport in transports)
    {
        Console.WriteLine();
        Console.WriteLine($"== {transport.Name} ==");
        Console.WriteLine($"Num clients, Total [msg], Msgs/sec, CV, vs stock, vs ceiling, CPU [us/msg], CV, CPU vs stock, Alloc [B/msg], GCs 0/1/2, Frames/send{(transport.IsFlushBatching ? ", Queue delay p50/p99 [us], Flushes by reason (all runs)" : "")}");
        foreach (var clients in clientCounts)
        {
            var rows = report.Rows.Where(row => row.Transport == transport.Name && row.Clients == clients).ToList();
            var rate = Median(rows.Select(row => row.MsgsPerSec));
            var cpu = Median(rows.Select(row => row.CpuUsPerMessage));
            var framesPerSend = rows.Select(row => row.FramesPerSend).OfType<double>().ToList();
            Console.WriteLine(
                $"{clients}, {rows[0].Messages}, {rate:N0}, {Cv(rows.Select(row => row.MsgsPerSec)):P0}, " +
                $"{Ratio(rate, TransportUnderTest.Stock, clients, row => row.MsgsPerSec)}, " +
                $"{Ratio(rate, TransportUnderTest.Ceiling, clients, row => row.MsgsPerSec)}, " +
                $"{cpu:N2}, {Cv(rows.Select(row => row.CpuUsPerMessage)):P0}, " +
                $"{Ratio(cpu, TransportUnderTest.Stock, clients, row => row.CpuUsPerMessage)}, " +
                $"{Median(rows.Select(row => row.AllocatedBytesPerMessage)):N0}, " +
                $"{Median(rows.Select(row => (double)row.Gen0Collections)):N0}/{Median(rows.Select(row => (double)row.Gen1Collections)):N0}/{Median(rows.Select(row => (double)row.Gen2Collections)):N0}, " +
                $"{(framesPerSend.Count > 0 ? Median(framesPerSend).ToString("N1") : "-")}{QueueDelay(rows.Select(row => row.QueueDelayP50Us), rows.Select(row => row.QueueDelayP99Us))}{Reasons(rows)}");
        }
    }

    // A median against the median of another transport's rows at the same client count; "-" when it did not run.
    string Ratio(double value, string reference, int clients, Func<RowResult, double> measure)
    {
        var theirs = report.Rows.Where(row => row.Transport == reference && row.Clients == clients).Select(measure).ToList();
        return theirs.Count > 0 ? $"{value / Median(theirs):N2}x" : "-";
    }
}

// Interleaved like the throughput rows (each run visits every transport in turn), so a slow spell of the machine
// falls on all of them; percentiles are medians over the runs.
static async Task Latency(EchoHost echoes, TransportUnderTest[] transports, int roundTrips, int repeat, int payload, Report report)
{
    await Interleaved(repeat, [roundTrips], transports, async (r, _, transport) =>
    {
        var result = await PingPongRun.LatencyAsync(echoes, transport, r, roundTrips, payload);
        report.Latency.Add(result);
        return $"{result.Transport} latency: p50 {result.P50Us:N0} us, p99 {result.P99Us:N0} us, {result.CpuUsPerRoundTrip:N1} us CPU per round trip";
    });

    // Light load is judged against Akka without batching, which flushes every message at once.
    var reference = transports.Any(t => t.Name == TransportUnderTest.StockNoBatching) ? TransportUnderTest.StockNoBatching : TransportUnderTest.Stock;
    var referenceP50 = report.Latency.Where(l => l.Transport == reference).Select(l => l.P50Us).ToList();
    Console.WriteLine();
    Console.WriteLine($"Latency: 1 client, 1 message in flight, {roundTrips} round trips after {PingPongRun.UntimedRoundTrips(roundTrips)} untimed; medians of {repeat} run(s), max over all");
    Console.WriteLine($"{"Transport",-24}{"p50 [us]",10}{"CV",6}{"vs " + reference,22}{"p90 [us]",10}{"p99 [us]",10}{"max [us]",10}{"CPU [us/rt]",13}{"CV",6}");
    foreach (var transport in transports)
    {
        var results = report.Latency.Where(l => l.Transport == transport.Name).ToList();
        var p50 = Median(results.Select(l => l.P50Us));
        var ratio = referenceP50.Count > 0 ? $"{p50 / Median(referenceP50):N2}x" : "-";
        Console.WriteLine(
            $"{transport.Name,-24}{p50,10:N0}{Cv(results.Select(l => l.P50Us)),6:P0}{ratio,22}" +
            $"{Median(results.Select(l => l.P90Us)),10:N0}{Median(results.Select(l => l.P99Us)),10:N0}{results.Max(l => l.MaxUs),10:N0}" +
            $"{Median(results.Select(l => l.CpuUsPerRoundTrip)),13:N1}{Cv(results.Select(l => l.CpuUsPerRoundTrip)),6:P0}");
    }
}

// Standard deviation over mean: how far single runs stray; 0 with one run.
static double Cv(IEnumerable<double> values)
{
    var all = values.ToArray();
    if (all.Length < 2)
    {
        return 0;
    }

    var mean = all.Average();
    return Math.Sqrt(all.Sum(v => (v - mean) * (v - mean)) / (all.Length - 1)) / mean;
}

static double Median(IEnumerable<double> values) => Sweep.Median(values);

// Rate by rate, each transport in turn within a rate, so a slow spell of the machine falls on all of them; the table
// gives medians over the runs, and per transport the highest rate whose p99 stayed under the bound with every
// message back.
static async Task OpenLoop(
    EchoHost echoes, TransportUnderTest[] transports, int clients, int[] rates, TimeSpan duration, double p99BoundMs, int repeat, int payload, FrameCounter counter, Report report)
{
    Console.WriteLine($"open loop: {clients} clients, {payload} B payload, {duration.TotalSeconds:N0} s per rate, latency from each message's due time");
    await WarmUp.UntilJitQuietAsync(async () =>
    {
        foreach (var transport in transports)
        {
            await OpenLoopRun.RunAsync(echoes, transport, 0, clients, rates[0], TimeSpan.FromSeconds(2), payload, counter); // not counted
        }
    });

    await Interleaved(repeat, rates, transports, async (r, rate, transport) =>
    {
        var row = await OpenLoopRun.RunAsync(echoes, transport, r, clients, rate, duration, payload, counter);
        report.OpenLoop.Add(row);
        return $"{row.Transport} at {rate:N0}/s: p50 {row.P50Us:N0} us, p99 {row.P99Us:N0} us{(row.Sustained ? "" : ", NOT all back")}";
    });

    Console.WriteLine();
    Console.WriteLine($"Medians of {repeat} run(s); latency [us] from each message's due time; 'all back' = every message came back within 10 s of the last one due");
    Console.WriteLine("Transport, Offered [rt/s], Achieved [rt/s], p50, p99, p99.9, max, all back, queue delay p50/p99 [us]");
    foreach (var transport in transports)
    {
        foreach (var rate in rates)
        {
            var rows = report.OpenLoop.Where(row => row.Transport == transport.Name && row.OfferedPerSec == rate).ToList();
            Console.WriteLine($"{transport.Name}, {rate}, {Median(rows.Select(row => row.AchievedPerSec)):N0}, {Median(rows.Select(row => row.P50Us)):N0}, " +
                $"{Median(rows.Select(row => row.P99Us)):N0}, {Median(rows.Select(row => row.P999Us)):N0}, {Median(rows.Select(row => row.MaxUs)):N0}, {(rows.All(row => row.Sustained) ? "yes" : "no")}" +
                QueueDelay(rows.Select(row => row.QueueDelayP50Us), rows.Select(row => row.QueueDelayP99Us)));
        }
    }

    Console.WriteLine();
    Console.WriteLine($"Highest offered rate with p99 under {p99BoundMs} ms and every message back:");
    var best = transports.ToDictionary(t => t.Name, t => rates
        .Where(rate => report.OpenLoop.Where(row => row.Transport == t.Name && row.OfferedPerSec == rate) is var rows
            && rows.All(row => row.Sustained) && Median(rows.Select(row => row.P99Us)) < p99BoundMs * 1000)
        .DefaultIfEmpty(0).Max());
    foreach (var (name, rate) in best)
    {
        var stock = best.GetValueOrDefault(TransportUnderTest.Stock);
        Console.WriteLine($"{name}: {rate:N0} rt/s{(stock > 0 && name != TransportUnderTest.Stock ? $" ({(double)rate / stock:N2}x stock)" : "")}");
    }
}

// Step by step, each transport in turn within a step, so a slow spell of the machine falls on all of them; medians
// over the runs. Per association: what the hub holds with every peer up, less what it held before they came, over the
// number of peers.
static async Task ManyPeers(TransportUnderTest[] transports, int[] steps, TimeSpan window, int repeat, string[] passOn, Report report)
{
    Console.WriteLine($"many peers: {string.Join(", ", steps)} peer systems in processes of {ManyPeersRun.PeersPerProcess}, one ping a second each, {window.TotalSeconds:N0} s measured");
    foreach (var transport in transports)
    {
        await ManyPeersRun.RunAsync(transport, 0, 1, TimeSpan.FromSeconds(1), passOn); // warm-up, not counted
    }

    await Interleaved(repeat, steps, transports, async (r, peers, transport) =>
    {
        var row = await ManyPeersRun.RunAsync(transport, r, peers, window, passOn);
        report.ManyPeers.Add(row);
        return $"{row.Transport} with {peers} peers: working set +{row.WorkingSetMb - row.BaselineWorkingSetMb:N1} MB, " +
            $"{row.Threads - row.BaselineThreads:+0;-0} threads, {row.OpenFiles - row.BaselineOpenFiles:+0;-0} fds, {row.CpuPercentOfCore:N1}% of a core, p99 {row.RttP99Us:N0} us";
    });

    Console.WriteLine();
    Console.WriteLine($"Medians of {repeat} run(s); the hub process only; per association = (with the peers - before them) / peers");
    Console.WriteLine("Transport, Peers, Working set [MB], per assoc [KB], Live heap per assoc [KB], Threads +, Fds +, CPU [% of a core], Round trips, p50 [us], p99 [us]");
    foreach (var transport in transports)
    {
        foreach (var peers in steps)
        {
            var rows = report.ManyPeers.Where(row => row.Transport == transport.Name && row.Peers == peers).ToList();
            Console.WriteLine($"{transport.Name}, {peers}, {Median(rows.Select(row => row.WorkingSetMb)):N0}, " +
                $"{Median(rows.Select(row => (row.WorkingSetMb - row.BaselineWorkingSetMb) * 1024 / peers)):N0}, " +
                $"{Median(rows.Select(row => (row.LiveHeapMb - row.BaselineLiveHeapMb) * 1024 / peers)):N0}, " +
                $"{Median(rows.Select(row => (double)(row.Threads - row.BaselineThreads))):N0}, {Median(rows.Select(row => (double)(row.OpenFiles - row.BaselineOpenFiles))):N0}, " +
                $"{Median(rows.Select(row => row.CpuPercentOfCore)):N1}, {Median(rows.Select(row => (double)row.RoundTrips)):N0}, " +
                $"{Median(rows.Select(row => row.RttP50Us)):N0}, {Median(rows.Select(row => row.RttP99Us)):N0}");
        }
    }
}

// Run by run, step by step, each transport in turn within a step, so a slow spell of the machine falls on all of them
// rather than on one; `run` measures one (run, step, transport) and returns its progress line, printed to stderr.
static async Task Interleaved<TStep>(int repeat, IReadOnlyList<TStep> steps, TransportUnderTest[] transports, Func<int, TStep, TransportUnderTest, Task<string>> run)
{
    var runs = transports.Length * steps.Count * repeat;
    var done = 0;
    for (var r = 1; r <= repeat; r++)
    {
        foreach (var step in steps)
        {
            foreach (var transport in transports)
            {
                var line = await run(r, step, transport);
                Console.Error.WriteLine($"[{++done}/{runs}] {line}");
            }
        }
    }
}

static int Fail(string message)
{
    Console.Error.WriteLine(message);
    return 2;
}

// Medians over the runs of each run's p50 and p99; nothing for stock, which records no queue delay.
static string QueueDelay(IEnumerable<double?> p50s, IEnumerable<double?> p99s)
{
    var p50 = p50s.OfType<double>().ToList();
    var p99 = p99s.OfType<double>().ToList();
    return p50.Count == 0 ? "" : $", {Median(p50):N0}/{Median(p99):N0}";
}

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

        lines.Add($"{parts[0]} = \"{parts[1]}\"");
    }

    var section = string.Join(Environment.NewLine, lines);
    FlushBatchingTransport.Validate(ConfigurationFactory.ParseString(section)); // a bad value fails here, naming the key
    return section;
}

static List<(string Writes, string Bytes, string Interval)> Grid(string[] writes, string[] bytes, string[] intervals)
{
    var grid = (from w in writes from b in bytes from i in intervals select (w, b, i)).ToList();

    // Check every value before running anything: a typo fails at once, naming the key.
    foreach (var (w, b, i) in grid)
    {
        Section([$"batching.max-pending-writes={w}", $"batching.max-pending-bytes={b}", $"batching.flush-interval={i}"]);
    }

    return grid;
}
