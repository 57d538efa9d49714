using System.CommandLine;
using Akka.Actor;
using System.Text.Json;
using FlushBatching;
using FlushBatching.Benchmarks.Shared;
using FlushBatching.Tests.Support;
using RemotePingPong;
using RemotePingPong.ManyPeers;
using RemotePingPong.OpenLoop;
using RemotePingPong.Soak;

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
var sweepOption = new Option<bool>("--sweep") { Description = "Tune: run each FlushBatching transport named in --transport (flushbatching alone when none is) at every combination of the three lists below, each beside stock, and print the best as a section to paste." };
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
    Description = "With --role client: a soak of this many minutes instead of the rows: steady load on the first --transport with the last --clients count, connections re-made every --soak-cycle minutes, both processes sampled every --sample-every seconds; fails when a holding grows. benchmarks/soak.sh runs it. " +
        "With --peers N (one count) and --role local: a hub and N peer systems on one --transport for this many minutes, the hub pinging each --peers-rate times a second, the hub sampled (DotNetty's pooled allocator and EventSource included); benchmarks/peers-soak.sh runs it.",
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
var peersRateOption = new Option<int>("--peers-rate") { Description = "With --peers and --soak: pings the hub sends each peer per second, of --payload bytes.", DefaultValueFactory = _ => 1 };
var hubOption = new Option<string?>("--hub") { Description = "With --role peers: the hub's address." };
var starvePoolOption = new Option<int>("--starve-pool")
{
    Description = "With --role server: keep this many work items blocking the .NET thread pool (each sleeps 20 ms and queues itself again), " +
        "as sync-over-async in actors does, on a pool held at that many threads, to see what a starved pool does to each transport's round trips.",
};
var portOption = new Option<int>("--port") { Description = "With --role server: the port clients reach the server on.", DefaultValueFactory = _ => 4055 };

var root = new RootCommand(
    "RemotePingPong: two ActorSystems on 127.0.0.1, remote-deployed echo actors and as many local clients, each keeping 50 messages in flight. msgs/sec = 2 x clients x messages / elapsed. Every message must come back, or the run fails.")
{
    transportOption, clientsOption, messagesOption, repeatOption, payloadOption, setOption, latencyOption, roundTripsOption, quickOption, jsonOption,
    sweepOption, sweepWritesOption, sweepBytesOption, sweepIntervalOption, roleOption, serverOption, serverTransportOption, hostnameOption,
    publicHostnameOption, portOption, starvePoolOption, inFlightOption, frameSizeOption, peersOption, peersWindowOption, peersRateOption, hubOption, soakOption, soakCycleOption, sampleEveryOption, tlsOption, openLoopOption, openLoopSecondsOption, p99BoundOption,
    warmUpLimitOption,
};

root.SetAction(async (parse, _) =>
{
    var role = parse.GetValue(roleOption)!;
    var hostname = parse.GetValue(hostnameOption)!;
    var publicHostname = parse.GetValue(publicHostnameOption)!;
    if (role == "server")
    {
        return await ServerRole.RunAsync(hostname, publicHostname, parse.GetValue(portOption), parse.GetValue(starvePoolOption));
    }

    if (role == "client" && parse.GetValue(serverOption) is null)
    {
        Console.Error.WriteLine("--role client needs --server, the address the server printed.");
        return 2;
    }

    var soakMinutes = parse.GetValue(soakOption);
    var peersSoak = soakMinutes != 0 && role == "local" && parse.GetValue(peersOption)!.Length == 1;
    if (soakMinutes != 0 && ((role != "client" && !peersSoak) || soakMinutes < 0 || parse.GetValue(soakCycleOption) < 1 || parse.GetValue(sampleEveryOption) < 1 || parse.GetValue(peersRateOption) < 1))
    {
        Console.Error.WriteLine("--soak takes --role client, or --peers with one count; a positive number of minutes; --soak-cycle, --sample-every and --peers-rate must be at least 1.");
        return 2;
    }

    if (parse.GetValue(tlsOption) && soakMinutes == 0 && role != "peers")
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
        if (parse.GetValue(frameSizeOption) is { } frameSize)
        {
            shared = TransportSection.Section([$"maximum-frame-size={frameSize}"]);
        }

        section = TransportSection.Section(parse.GetValue(setOption) ?? [], shared);

        if (certificate is not null)
        {
            section += Environment.NewLine + SoakRun.TlsSection(certificate);
        }

        if (parse.GetValue(sweepOption))
        {
            grid = TransportSection.Grid(
                parse.GetValue(sweepWritesOption) is { Length: > 0 } w ? w : ["10", "30", "100"],
                parse.GetValue(sweepBytesOption) is { Length: > 0 } b ? b : ["16k", "64k"],
                parse.GetValue(sweepIntervalOption) is { Length: > 0 } i ? i : ["40ms"],
                shared);
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
    Console.WriteLine(peersSoak
        ? $"peers soak: {peerSteps[0]} peers, {parse.GetValue(peersRateOption)} pings/s each, {payload} B payload, {soakMinutes} minutes"
        : soakMinutes > 0
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

    if (peersSoak)
    {
        string[] passOn = [.. (parse.GetValue(setOption) ?? []).SelectMany(set => new[] { "--set", set }), .. certificate is null ? Array.Empty<string>() : ["--tls"]];
        try
        {
            var soak = await PeersSoakRun.RunAsync(
                transports[0], certificate is not null, peerSteps[0], parse.GetValue(peersRateOption), payload, TimeSpan.FromMinutes(soakMinutes),
                TimeSpan.FromSeconds(parse.GetValue(sampleEveryOption)), passOn);
            soak.Print();
            if (parse.GetValue(jsonOption) is { } soakJson)
            {
                await File.WriteAllTextAsync(soakJson.FullName, JsonSerializer.Serialize(soak, new JsonSerializerOptions { WriteIndented = true }));
                Console.WriteLine($"wrote {soakJson.FullName}");
            }

            return soak.Failed ? 1 : 0;
        }
        catch (Exception e) when (e is TimeoutException or AskTimeoutException)
        {
            Console.Error.WriteLine($"error: {e.Message}");
            return 1;
        }
    }

    Console.WriteLine(echoes.Description);
    if (soakMinutes > 0)
    {
        try
        {
            return await SoakMode.RunAsync(
                (RemoteEchoHost)echoes, transports[0], certificate is not null, clientCounts[^1], payload, TimeSpan.FromMinutes(soakMinutes),
                TimeSpan.FromMinutes(parse.GetValue(soakCycleOption)), TimeSpan.FromSeconds(parse.GetValue(sampleEveryOption)), parse.GetValue(jsonOption));
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
            await ManyPeersMode.RunAsync([.. transports.Where(t => !t.InProcessOnly)], peerSteps, TimeSpan.FromSeconds(parse.GetValue(peersWindowOption)), repeat, passOn, report);
            return await WriteJson(report);
        }

        if (openLoopRates.Length > 0)
        {
            await OpenLoopMode.RunAsync(echoes, [.. transports.Where(t => !t.InProcessOnly)], clientCounts[^1], openLoopRates, TimeSpan.FromSeconds(parse.GetValue(openLoopSecondsOption)),
                parse.GetValue(p99BoundOption), repeat, payload, counter, report);
            return await WriteJson(report);
        }

        await WarmUp.EveryTransportAsync(echoes, transports, messages, payload, counter);

        if (grid is not null)
        {
            // The FlushBatching transports named in --transport, or the sockets stack when none is (the default names all).
            var named = parse.GetValue(transportOption)!.Intersect(Sweep.Candidates).ToArray();
            var candidates = parse.GetResult(transportOption) is not { Implicit: false } || named.Length == 0 ? [TransportUnderTest.FlushBatching] : named;
            await Sweep.RunAsync(echoes, candidates, grid, section, clientCounts, messages, repeat, payload, counter, report);
        }
        else
        {
            await ThroughputMode.RunAsync(echoes, transports, clientCounts, messages, repeat, payload, counter, report);
        }

        if (latency)
        {
            await LatencyMode.RunAsync(echoes, transports, roundTrips, repeat, payload, report);
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

static int Fail(string message)
{
    Console.Error.WriteLine(message);
    return 2;
}

