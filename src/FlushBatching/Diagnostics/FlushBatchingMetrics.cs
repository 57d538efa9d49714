using System.Diagnostics.Metrics;
using FlushBatching.Batching;

namespace FlushBatching.Diagnostics;

/// <summary>
/// The counters of the <c>FlushBatching</c> Meter: frames and bytes sent and received, sends, flushes by
/// reason, and histograms of frames and bytes per send. Read them with <c>dotnet-counters monitor
/// --counters FlushBatching</c> or any OpenTelemetry exporter.
/// </summary>
/// <remarks>
/// Recorded once per send and once per read, never per frame, so they cost little when nobody listens.
/// Connections use <see cref="Shared"/> unless their settings name another instance; a test creates its own
/// to listen to one connection alone.
/// </remarks>
public sealed class FlushBatchingMetrics : IDisposable
{
    /// <summary>The Meter's name: <c>FlushBatching</c>.</summary>
    public const string MeterName = "FlushBatching";

    private static readonly KeyValuePair<string, object?>[] ReasonTags =
        Enum.GetValues<FlushReason>().Select(r => new KeyValuePair<string, object?>("reason", ReasonName(r))).ToArray();

    private readonly Counter<long> _framesSent;
    private readonly Counter<long> _bytesSent;
    private readonly Counter<long> _sends;
    private readonly Counter<long> _flushes;
    private readonly Counter<long> _writesRefused;
    private readonly Counter<long> _framesReceived;
    private readonly Counter<long> _bytesReceived;
    private readonly Histogram<int> _framesPerSend;
    private readonly Histogram<long> _bytesPerSend;

    /// <summary>Creates the instruments on a new Meter named <see cref="MeterName"/>.</summary>
    public FlushBatchingMetrics()
    {
        Meter = new Meter(MeterName, typeof(FlushBatchingMetrics).Assembly.GetName().Version?.ToString());
        _framesSent = Meter.CreateCounter<long>("flushbatching.frames.sent", "{frame}", "Frames written to sockets.");
        _bytesSent = Meter.CreateCounter<long>("flushbatching.bytes.sent", "By", "Bytes written to sockets, length prefixes included.");
        _sends = Meter.CreateCounter<long>("flushbatching.sends", "{send}", "Gathered sends issued to sockets.");
        _flushes = Meter.CreateCounter<long>("flushbatching.flushes", "{flush}", "Flushes, tagged with the reason: count, bytes, interval, burst-end, unbatched, read-complete or drain.");
        _writesRefused = Meter.CreateCounter<long>("flushbatching.writes.refused", "{write}", "Writes refused because the connection was above its high-water mark: back-pressure on the writer.");
        _framesReceived = Meter.CreateCounter<long>("flushbatching.frames.received", "{frame}", "Frames read from sockets.");
        _bytesReceived = Meter.CreateCounter<long>("flushbatching.bytes.received", "By", "Payload bytes read from sockets.");
        _framesPerSend = Meter.CreateHistogram<int>("flushbatching.frames_per_send", "{frame}", "Frames in each send: how well writes are batched.");
        _bytesPerSend = Meter.CreateHistogram<long>("flushbatching.bytes_per_send", "By", "Bytes in each send.");
    }

    /// <summary>The instance connections use by default.</summary>
    public static FlushBatchingMetrics Shared { get; } = new();

    /// <summary>The Meter the instruments belong to.</summary>
    public Meter Meter { get; }

    /// <summary>The tag value for <paramref name="reason"/>, such as <c>burst-end</c>.</summary>
    public static string ReasonName(FlushReason reason) => reason switch
    {
        FlushReason.None => "none",
        FlushReason.Count => "count",
        FlushReason.Bytes => "bytes",
        FlushReason.Interval => "interval",
        FlushReason.BurstEnd => "burst-end",
        FlushReason.Unbatched => "unbatched",
        FlushReason.ReadComplete => "read-complete",
        FlushReason.Drain => "drain",
        _ => throw new ArgumentOutOfRangeException(nameof(reason), reason, null),
    };

    /// <summary>Records one flush that went out as one send of <paramref name="frames"/> frames.</summary>
    public void RecordSend(int frames, long bytes, FlushReason reason)
    {
        _sends.Add(1);
        _flushes.Add(1, ReasonTags[(int)reason]);
        _framesSent.Add(frames);
        _bytesSent.Add(bytes);
        _framesPerSend.Record(frames);
        _bytesPerSend.Record(bytes);
    }

    /// <summary>Records one write refused by back-pressure (not by a closed connection).</summary>
    public void RecordRefused() => _writesRefused.Add(1);

    /// <summary>Records frames read from a socket.</summary>
    public void RecordReceived(long frames, long bytes)
    {
        if (frames > 0)
        {
            _framesReceived.Add(frames);
            _bytesReceived.Add(bytes);
        }
    }

    /// <inheritdoc />
    public void Dispose() => Meter.Dispose();
}
