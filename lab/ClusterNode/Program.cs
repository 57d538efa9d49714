using System.CommandLine;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Runtime.InteropServices;
using System.Text.Json;
using Akka.Actor;
using Akka.Cluster;
using Akka.Configuration;
using ClusterNode;
using FlushBatching.Diagnostics;

var nameOption = new Option<string>("--name") { Description = "The node's name in its report lines.", Required = true };
var transportOption = new Option<string>("--transport")
{
    Description = "flushbatching, flushbatching-dotnetty (its event loops on the thread pool), flushbatching-dotnetty-dedicated (DotNetty's own loops) or stock.",
    DefaultValueFactory = _ => "flushbatching",
};
transportOption.AcceptOnlyFromAmong("flushbatching", "flushbatching-dotnetty", "flushbatching-dotnetty-dedicated", "stock");
var hostnameOption = new Option<string>("--hostname") { Description = "The address to bind and to be reached by.", DefaultValueFactory = _ => "127.0.0.1" };
var portOption = new Option<int>("--port") { Description = "The port to bind.", DefaultValueFactory = _ => 2552 };
var seedOption = new Option<string>("--seed") { Description = "The seed node's address, such as akka.tcp://lab@10.77.0.1:2552.", Required = true };
var windowOption = new Option<int>("--window") { Description = "Unacknowledged messages allowed per peer.", DefaultValueFactory = _ => 20 };
var rateOption = new Option<double>("--rate") { Description = "Messages per second to each peer; 0 sends as fast as the window allows.", DefaultValueFactory = _ => 50 };
var payloadOption = new Option<int>("--max-payload") { Description = "The largest message, in bytes; sizes are log-uniform up to it.", DefaultValueFactory = _ => 120_000 };
var stallOption = new Option<int>("--stall-timeout-ms") { Description = "A window with no acknowledgement for this long is given up.", DefaultValueFactory = _ => 5_000 };
var pfxOption = new Option<string?>("--tls-pfx") { Description = "Turns TLS on with this PKCS#12 file (mutual authentication, as stock's defaults)." };
var passwordOption = new Option<string>("--tls-password") { Description = "The PKCS#12 file's password.", DefaultValueFactory = _ => "" };

var root = new RootCommand("One Akka.Cluster node for the FlushBatching fault lab. Prints one line a second: LAB {json}.")
{
    nameOption, transportOption, hostnameOption, portOption, seedOption, windowOption, rateOption, payloadOption, stallOption, pfxOption, passwordOption,
};

root.SetAction(async (parse, _) =>
{
    var name = parse.GetValue(nameOption)!;
    var transportClass = parse.GetValue(transportOption) switch
    {
        "flushbatching" => "FlushBatching.Akka.BatchingTcpTransport, FlushBatching.Akka",
        "flushbatching-dotnetty" or "flushbatching-dotnetty-dedicated" => "FlushBatching.Akka.DotNettyBatchingTransport, FlushBatching.Akka",
        _ => "Akka.Remote.Transport.DotNetty.TcpTransport, Akka.Remote",
    };
    var eventLoop = parse.GetValue(transportOption) == "flushbatching-dotnetty-dedicated" ? "event-loop = dedicated" : "";
    var pfx = parse.GetValue(pfxOption);
    var tls = pfx is null ? "" : $$"""
        enable-ssl = on
        ssl.certificate { path = "{{pfx}}", password = "{{parse.GetValue(passwordOption)}}" }
        """;
    var config = ConfigurationFactory.ParseString($$"""
        akka {
          loglevel = WARNING
          stdout-loglevel = OFF
          loggers = ["{{typeof(CountingLogger).FullName}}, {{typeof(CountingLogger).Assembly.GetName().Name}}"]
          actor.provider = cluster
          remote.dot-netty.tcp {
            hostname = "{{parse.GetValue(hostnameOption)}}"
            port = {{parse.GetValue(portOption)}}
            transport-class = "{{transportClass}}"
            {{eventLoop}}
            {{tls}}
          }
          cluster {
            seed-nodes = ["{{parse.GetValue(seedOption)}}"]
            # No downing: a partitioned or frozen node must become reachable again by itself once healed. A restarted
            # node on the same address replaces its old incarnation, which the cluster removes when the new one joins.
            downing-provider-class = ""
          }
        }
        """);

    var system = ActorSystem.Create("lab", config);
    var traffic = system.ActorOf(
        Props.Create(() => new Traffic(parse.GetValue(windowOption), parse.GetValue(rateOption), parse.GetValue(payloadOption), TimeSpan.FromMilliseconds(parse.GetValue(stallOption)))),
        Traffic.Name);
    var cluster = Cluster.Get(system);

    // Writes this project's transports refused above their high-water mark: the back-pressure Akka.Remote then absorbs.
    long writesRefused = 0;
    using var refusals = new MeterListener
    {
        InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == FlushBatchingMetrics.MeterName && instrument.Name == "flushbatching.writes.refused")
            {
                listener.EnableMeasurementEvents(instrument);
            }
        },
    };
    refusals.SetMeasurementEventCallback<long>((_, value, _, _) => Interlocked.Add(ref writesRefused, value));
    refusals.Start();

    using var stop = new CancellationTokenSource();
    using var term = PosixSignalRegistration.Create(PosixSignal.SIGTERM, context =>
    {
        context.Cancel = true;
        stop.Cancel();
    });
    var started = Stopwatch.GetTimestamp();
    while (!stop.IsCancellationRequested)
    {
        try
        {
            await Task.Delay(1000, stop.Token);
        }
        catch (OperationCanceledException)
        {
            break;
        }

        Dictionary<string, PeerStats> peers;
        try
        {
            peers = await traffic.Ask<Dictionary<string, PeerStats>>(Traffic.GetSnapshot.Instance, TimeSpan.FromSeconds(5));
        }
        catch (Exception e) when (e is AskTimeoutException or TaskCanceledException)
        {
            continue;
        }

        var state = cluster.State;
        using var process = Process.GetCurrentProcess();
        var report = new
        {
            Node = name,
            Address = cluster.SelfAddress.ToString(),
            UptimeMs = (long)Stopwatch.GetElapsedTime(started).TotalMilliseconds,
            Members = state.Members.Select(m => new { Address = m.Address.ToString(), Status = m.Status.ToString(), m.UniqueAddress.Uid }).ToList(),
            Unreachable = state.Unreachable.Select(m => m.Address.ToString()).ToList(),
            Peers = peers,
            WorkingSetMb = process.WorkingSet64 / (1024.0 * 1024.0),
            GcHeapMb = GC.GetGCMemoryInfo().HeapSizeBytes / (1024.0 * 1024.0),
            Threads = process.Threads.Count,
            WritesRefused = Interlocked.Read(ref writesRefused),
            Warnings = CountingLogger.Warnings,
            Errors = CountingLogger.Errors,
        };
        Console.WriteLine("LAB " + JsonSerializer.Serialize(report, JsonOptions.Web));
    }

    await system.Terminate();
    return 0;
});

return await root.Parse(args).InvokeAsync();

/// <summary>camelCase JSON, as the lab reads it.</summary>
internal static class JsonOptions
{
    public static readonly JsonSerializerOptions Web = new(JsonSerializerDefaults.Web);
}
