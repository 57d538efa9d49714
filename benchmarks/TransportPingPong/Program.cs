using System.CommandLine;
using System.Runtime.InteropServices;
using System.Text.Json;
using FlushBatching;
using FlushBatching.Batching;
using FlushBatching.Benchmarks.Shared;
using FlushBatching.Tcp;
using TransportPingPong;

var pairsOption = ListOptions.Numbers("--pairs", "Connection pair counts, one row each (comma-separated).", [1, 5, 10, 15, 20, 25, 30]);
var batchingOption = ListOptions.Words("--batching", "Modes to run, interleaved row by row (comma-separated).", ["off", "on"], ["off", "on"]);
var writesOption = new Option<int?>("--max-pending-writes") { Description = "Batching on: writes that force a flush (default 30)." };
var bytesOption = new Option<long?>("--max-pending-bytes") { Description = "Batching on: bytes that force a flush (default 16384)." };
var intervalOption = new Option<double?>("--flush-interval-ms") { Description = "Batching on: the longest a write is held, in milliseconds (default 40)." };
var inFlightOption = new Option<int>("--in-flight") { Description = "Messages each client keeps in flight.", DefaultValueFactory = _ => 50 };
var messagesOption = new Option<int>("--messages") { Description = "Round trips per pair.", DefaultValueFactory = _ => 100_000 };
var payloadOption = new Option<int>("--payload") { Description = "Payload bytes per message (at least 8, for the timestamp).", DefaultValueFactory = _ => 100 };
var jsonOption = new Option<FileInfo?>("--json") { Description = "Also write the rows to this JSON file." };

var root = new RootCommand("Ping-pong over loopback TCP on the FlushBatching core. Each round trip is two messages; msgs/s = 2 x pairs x messages / elapsed.")
{
    pairsOption, batchingOption, writesOption, bytesOption, intervalOption, inFlightOption, messagesOption, payloadOption, jsonOption,
};

root.SetAction(async (parse, _) =>
{
    var inFlight = parse.GetValue(inFlightOption);
    var messages = parse.GetValue(messagesOption);
    var payload = parse.GetValue(payloadOption);
    if (inFlight < 1 || messages < 1 || payload < 8)
    {
        Console.Error.WriteLine("--in-flight and --messages must be at least 1, and --payload at least 8.");
        return 2;
    }

    ConnectionSettings on;
    try
    {
        var batching = BatchingSettings.Default;
        batching = parse.GetValue(writesOption) is { } writes ? batching.WithMaxPendingWrites(writes) : batching;
        batching = parse.GetValue(bytesOption) is { } bytes ? batching.WithMaxPendingBytes(bytes) : batching;
        batching = parse.GetValue(intervalOption) is { } ms ? batching.WithFlushInterval(TimeSpan.FromMilliseconds(ms)) : batching;
        on = ConnectionSettings.Default.WithBatching(batching);
    }
    catch (InvalidSettingException e)
    {
        Console.Error.WriteLine(e.Message);
        return 2;
    }

    var modes = parse.GetValue(batchingOption)!.Distinct().ToDictionary(m => m, m => m == "on" ? on : on.WithBatching(on.Batching.WithEnabled(false)));
    Console.WriteLine($"TransportPingPong: {Environment.ProcessorCount} cores, {RuntimeInformation.OSDescription}, {RuntimeInformation.FrameworkDescription}");
    Console.WriteLine($"batching on: {on.Batching}; {inFlight} in flight, {messages} round trips per pair, {payload} B payload");

    // Warm up every mode once so tiered compilation and pools settle before anything is measured.
    foreach (var (mode, settings) in modes)
    {
        await PingPongRun.RunAsync(mode, settings, 2, Math.Min(messages, 20_000), inFlight, payload);
    }

    Console.WriteLine();
    Console.WriteLine($"{"Batching",-9}{"Pairs",6}{"Total [msg]",13}{"Msgs/sec",12}{"Total [ms]",12}{"Frames/send",13}{"B alloc/msg",13}{"RTT p50 [us]",14}{"RTT p99 [us]",14}");
    var rows = new List<RowResult>();
    foreach (var pairs in parse.GetValue(pairsOption)!)
    {
        foreach (var (mode, settings) in modes)
        {
            var row = await PingPongRun.RunAsync(mode, settings, pairs, messages, inFlight, payload);
            rows.Add(row);
            Console.WriteLine($"{row.Batching,-9}{row.Pairs,6}{row.Messages,13}{row.MsgsPerSec,12:N0}{row.ElapsedMs,12:N0}{row.FramesPerSend,13:N1}{row.BytesAllocatedPerMessage,13:N2}{row.RoundTripP50Us,14:N0}{row.RoundTripP99Us,14:N0}");
        }
    }

    if (parse.GetValue(jsonOption) is { } json)
    {
        await File.WriteAllTextAsync(json.FullName, JsonSerializer.Serialize(rows, new JsonSerializerOptions { WriteIndented = true }));
        Console.WriteLine($"wrote {json.FullName}");
    }

    return 0;
});

return await root.Parse(args).InvokeAsync();
