namespace RemotePingPong;

/// <summary>A transport the benchmark runs: its name on the command line, its class, and its section's lines.</summary>
internal sealed record TransportUnderTest(string Name, string TransportClass, string Section, bool IsFlushBatching)
{
    /// <summary>True for the ceiling, whose two ends must share this process: its rows run in-process in every role.</summary>
    public bool InProcessOnly => Name == Ceiling;

    public const string FlushBatching = "flushbatching";
    public const string FlushBatchingDotNetty = "flushbatching-dotnetty";
    public const string Stock = "stock";
    public const string StockNoBatching = "stock-nobatching";

    /// <summary>Akka.Remote over <see cref="Ceiling.InMemoryTransport"/>: no I/O at all, both systems in this process.</summary>
    public const string Ceiling = "ceiling";

    public static readonly string[] Names = [FlushBatching, FlushBatchingDotNetty, Stock, StockNoBatching, Ceiling];

    /// <summary>The transports a server process can run its echo systems on: all but the in-memory ceiling.</summary>
    public static readonly string[] ServerNames = [FlushBatching, FlushBatchingDotNetty, Stock, StockNoBatching];

    /// <summary>The transport called <paramref name="name"/>.</summary>
    /// <param name="section">Lines for this project's transports only (<c>--set</c>).</param>
    /// <param name="shared">Lines for every transport, keys that stock reads too (<c>--maximum-frame-size</c>).</param>
    public static TransportUnderTest Create(string name, string section, string shared = "") => name switch
    {
        FlushBatching => new(name, "FlushBatching.Akka.BatchingTcpTransport, FlushBatching.Akka", Lines(shared, section), true),
        FlushBatchingDotNetty => new(name, "FlushBatching.Akka.DotNettyBatchingTransport, FlushBatching.Akka", Lines(shared, section), true),
        Stock => new(name, "Akka.Remote.Transport.DotNetty.TcpTransport, Akka.Remote", shared, false),
        StockNoBatching => new(name, "Akka.Remote.Transport.DotNetty.TcpTransport, Akka.Remote", Lines(shared, "batching.enabled = false"), false),
        Ceiling => new(name, $"{typeof(Ceiling.InMemoryTransport).FullName}, RemotePingPong", shared, false),
        _ => throw new ArgumentOutOfRangeException(nameof(name), name, $"one of {string.Join(", ", Names)}"),
    };

    private static string Lines(string first, string second) =>
        string.Join(Environment.NewLine, new[] { first, second }.Where(lines => lines.Length > 0));
}
