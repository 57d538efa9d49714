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

    /// <summary>The transport called <paramref name="name"/>; <paramref name="section"/> goes to this project's transports only.</summary>
    public static TransportUnderTest Create(string name, string section) => name switch
    {
        FlushBatching => new(name, "FlushBatching.Akka.BatchingTcpTransport, FlushBatching.Akka", section, true),
        FlushBatchingDotNetty => new(name, "FlushBatching.Akka.DotNettyBatchingTransport, FlushBatching.Akka", section, true),
        Stock => new(name, "Akka.Remote.Transport.DotNetty.TcpTransport, Akka.Remote", "", false),
        StockNoBatching => new(name, "Akka.Remote.Transport.DotNetty.TcpTransport, Akka.Remote", "batching.enabled = false", false),
        Ceiling => new(name, $"{typeof(Ceiling.InMemoryTransport).FullName}, RemotePingPong", "", false),
        _ => throw new ArgumentOutOfRangeException(nameof(name), name, $"one of {string.Join(", ", Names)}"),
    };
}
