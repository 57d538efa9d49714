using System.Collections.Concurrent;
using System.Diagnostics.Tracing;

namespace RemotePingPong.ManyPeers;

/// <summary>
/// Every warning and error DotNetty reports in this process. DotNetty logs to its own EventSource ("DotNetty-Default"),
/// not to Akka's log, so a failure inside its Recycler or pooled allocator (akka.net #7662's NullReferenceException in
/// <c>WeakOrderQueue.Transfer</c>) is seen only by a listener like this one, as <c>dotnet-trace</c> would.
/// </summary>
internal sealed class DotNettyEvents : EventListener
{
    private const string SourceName = "DotNetty-Default";
    private const int Kept = 20;

    private readonly ConcurrentQueue<string> _first = new();
    private long _warnings;
    private long _errors;

    public long Warnings => Interlocked.Read(ref _warnings);

    public long Errors => Interlocked.Read(ref _errors);

    /// <summary>The first few events' text, for the report.</summary>
    public IReadOnlyList<string> First => [.. _first];

    protected override void OnEventSourceCreated(EventSource source)
    {
        if (source.Name == SourceName)
        {
            EnableEvents(source, EventLevel.Warning);
        }
    }

    protected override void OnEventWritten(EventWrittenEventArgs e)
    {
        if (e.Level > EventLevel.Warning)
        {
            return;
        }

        Interlocked.Increment(ref e.Level == EventLevel.Warning ? ref _warnings : ref _errors);
        if (_first.Count < Kept)
        {
            _first.Enqueue($"{e.Level}: {string.Join(" | ", e.Payload ?? [])}");
        }
    }
}
