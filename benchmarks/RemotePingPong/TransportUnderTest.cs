namespace RemotePingPong;

/// <summary>A transport the benchmark runs: its name on the command line, its class, and its section's lines.</summary>
internal sealed record TransportUnderTest(string Name, string TransportClass, string Section, bool IsFlushBatching)
{
    public const string FlushBatching = "flushbatching";
    public const string FlushBatchingDotNetty = "flushbatching-dotnetty";
    public const string Stock = "stock";
    public const string StockNoBatching = "stock-nobatching";

    public static readonly string[] Names = [FlushBatching, FlushBatchingDotNetty, Stock, StockNoBatching];

    /// <summary>The transport called <paramref name="name"/>; <paramref name="section"/> goes to this project's transports only.</summary>
    public static TransportUnderTest Create(string name, string section) => name switch
    {
        FlushBatching => new(name, "FlushBatching.Akka.BatchingTcpTransport, FlushBatching.Akka", section, true),
        FlushBatchingDotNetty => new(name, "FlushBatching.Akka.DotNettyBatchingTransport, FlushBatching.Akka", section, true),
        Stock => new(name, "Akka.Remote.Transport.DotNetty.TcpTransport, Akka.Remote", "", false),
        StockNoBatching => new(name, "Akka.Remote.Transport.DotNetty.TcpTransport, Akka.Remote", "batching.enabled = false", false),
        _ => throw new ArgumentOutOfRangeException(nameof(name), name, $"one of {string.Join(", ", Names)}"),
    };
}
