using InMemoryTransport = RemotePingPong.Ceiling.InMemoryTransport;

namespace RemotePingPong;

/// <summary>A transport the benchmark runs: its name on the command line, its class, and its section's lines.</summary>
internal sealed record TransportUnderTest(string Name, string TransportClass, string Section, bool IsFlushBatching)
{
    /// <summary>True for the ceiling, whose two ends must share this process: its rows run in-process in every role.</summary>
    public bool InProcessOnly => Name.StartsWith(Ceiling, StringComparison.Ordinal);

    public const string FlushBatching = "flushbatching";
    public const string FlushBatchingDotNetty = "flushbatching-dotnetty";

    /// <summary>The DotNetty stack on DotNetty's own event loops, a thread each (<c>event-loop = dedicated</c>), as stock's.</summary>
    public const string FlushBatchingDotNettyDedicated = "flushbatching-dotnetty-dedicated";
    public const string Stock = "stock";
    public const string StockNoBatching = "stock-nobatching";

    /// <summary>Akka.Remote over <see cref="InMemoryTransport"/>: no I/O at all, both systems in this process.</summary>
    public const string Ceiling = "ceiling";

    /// <summary>The ceiling with one thread hand-off per burst, as a transport that reads on its own thread has.</summary>
    public const string CeilingOneHandOff = "ceiling-handoff";

    /// <summary>The ceiling with two (a send loop, a receive loop): the sockets stack's threads without its I/O.</summary>
    public const string CeilingTwoHandOffs = "ceiling-handoff2";

    /// <summary>
    /// The ceiling with each payload delivered as a copy in an array of its own: what any transport that receives from a
    /// socket pays at least, so with large payloads the most such a transport can reach.
    /// </summary>
    public const string CeilingCopy = "ceiling-copy";

    public static readonly string[] Names = [FlushBatching, FlushBatchingDotNetty, FlushBatchingDotNettyDedicated, Stock, StockNoBatching, Ceiling, CeilingOneHandOff, CeilingTwoHandOffs, CeilingCopy];

    /// <summary>The transports a server process can run its echo systems on: all but the in-memory ceiling.</summary>
    public static readonly string[] ServerNames = [FlushBatching, FlushBatchingDotNetty, FlushBatchingDotNettyDedicated, Stock, StockNoBatching];

    /// <summary>The transport called <paramref name="name"/>.</summary>
    /// <param name="section">Lines for this project's transports only (<c>--set</c>).</param>
    /// <param name="shared">Lines for every transport, keys that stock reads too (<c>--maximum-frame-size</c>).</param>
    public static TransportUnderTest Create(string name, string section, string shared = "") => name switch
    {
        FlushBatching => new(name, "FlushBatching.Akka.BatchingTcpTransport, FlushBatching.Akka", Lines(shared, section), true),
        FlushBatchingDotNetty => new(name, "FlushBatching.Akka.DotNettyBatchingTransport, FlushBatching.Akka", Lines(shared, "event-loop = thread-pool", section), true),
        FlushBatchingDotNettyDedicated => new(name, "FlushBatching.Akka.DotNettyBatchingTransport, FlushBatching.Akka", Lines(shared, "event-loop = dedicated", section), true),
        Stock => new(name, "Akka.Remote.Transport.DotNetty.TcpTransport, Akka.Remote", shared, false),
        StockNoBatching => new(name, "Akka.Remote.Transport.DotNetty.TcpTransport, Akka.Remote", Lines(shared, "batching.enabled = false"), false),
        Ceiling => InMemory(name, shared, 0),
        CeilingOneHandOff => InMemory(name, shared, 1),
        CeilingTwoHandOffs => InMemory(name, shared, 2),
        CeilingCopy => InMemory(name, shared, 0, copyPayloads: true),
        _ => throw new ArgumentOutOfRangeException(nameof(name), name, $"one of {string.Join(", ", Names)}"),
    };

    private static TransportUnderTest InMemory(string name, string shared, int handOffs, bool copyPayloads = false) =>
        new(name, $"{typeof(InMemoryTransport).FullName}, RemotePingPong",
            Lines(shared, handOffs == 0 ? "" : $"{InMemoryTransport.HandOffsKey} = {handOffs}",
                copyPayloads ? $"{InMemoryTransport.CopyPayloadsKey} = on" : ""), false);

    private static string Lines(params string[] parts) =>
        string.Join(Environment.NewLine, parts.Where(lines => lines.Length > 0));
}
