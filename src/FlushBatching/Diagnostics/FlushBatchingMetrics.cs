using System.Diagnostics.Metrics;
using FlushBatching.Batching;

namespace FlushBatching.Diagnostics;

/// <summary>
/// The counters of the <c>FlushBatching</c> Meter: frames and bytes sent and received, sends, flushes by
/// reason, histograms of frames and bytes per send and of how long each send's oldest message waited, and the pooled
/// buffers connections hold. Read them with <c>dotnet-counters monitor -n APP
/// --counters FlushBatching</c> or any OpenTelemetry exporter (<c>AddMeter("FlushBatching")</c>).
/// </summary>
/// <remarks>
/// Recorded once per send and once per read, never per frame, so they cost little when nobody listens.
/// Connections use <see cref="Shared"/> unless their settings name another instance. An instance created with
/// tags puts them on every measurement, so that connections of different owners (each Akka transport tags its
/// own with its address) are told apart; keep the values few, one per owner, never one per connection.
/// The histograms carry bucket advice for sends (1 to 1024 frames, 64 B to 1 MiB), so OpenTelemetry's
/// default buckets, which end at 10,000, do not put most sends in the overflow bucket.
/// </remarks>
public sealed class FlushBatchingMetrics : IDisposable
{
    /// <summary>The Meter's name: <c>FlushBatching</c>.</summary>
    public const string MeterName = "FlushBatching";

    /// <summary>The tag that names the reason of a flush on <c>flushbatching.flushes</c>.</summary>
    public const string ReasonTag = "reason";

    private static readonly InstrumentAdvice<int> FramesPerSendAdvice = new()
    {
        HistogramBucketBoundaries = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
    };

    private static readonly InstrumentAdvice<long> BytesPerSendAdvice = new()
    {
        HistogramBucketBoundaries = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576],
    };

    // Seconds, from 10 us to 2.5 s: a send that waited behind nothing takes microseconds, a batch held to its
    // flush-interval tens of milliseconds, and a connection slower than its writers longer.
    private static readonly InstrumentAdvice<double> QueueDelayAdvice = new()
    {
        HistogramBucketBoundaries = [0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    };

    private readonly KeyValuePair<string, object?>[] _tags;
    private readonly KeyValuePair<string, object?>[][] _reasonTags;

    private readonly Counter<long> _framesSent;
    private readonly Counter<long> _bytesSent;
    private readonly Counter<long> _flushes;
    private readonly Counter<long> _writesRefused;
    private readonly Counter<long> _framesReceived;
    private readonly Counter<long> _bytesReceived;
    private readonly Histogram<int> _framesPerSend;
    private readonly Histogram<long> _bytesPerSend;
    private readonly Histogram<double> _queueDelay;

    // Rented from a connection's BufferPool and not yet returned, over every connection using this instance.
    private long _buffersRented;

    /// <summary>Creates the instruments on a new Meter named <see cref="MeterName"/>.</summary>
    /// <param name="tags">Put on every measurement; few values in all, such as one per ActorSystem.</param>
    public FlushBatchingMetrics(params KeyValuePair<string, object?>[] tags)
    {
        _tags = tags.ToArray();
        // Indexed by reason; None is never recorded (no flush happened), so its slot stays empty.
        _reasonTags = Enum.GetValues<FlushReason>()
            .Select(r => r == FlushReason.None ? [] : _tags.Append(new KeyValuePair<string, object?>(ReasonTag, ReasonName(r))).ToArray()).ToArray();
        Meter = new Meter(MeterName, typeof(FlushBatchingMetrics).Assembly.GetName().Version?.ToString());
        _framesSent = Meter.CreateCounter<long>("flushbatching.frames.sent", "{frame}", "Frames written to sockets.");
        _bytesSent = Meter.CreateCounter<long>("flushbatching.bytes.sent", "By", "Bytes written to sockets, length prefixes included.");
        _flushes = Meter.CreateCounter<long>("flushbatching.flushes", "{flush}", "Flushes, tagged with the reason: count, bytes, interval, burst-end, unbatched, read-complete or drain.");
        _writesRefused = Meter.CreateCounter<long>("flushbatching.writes.refused", "{write}", "Writes refused because the connection was above its high-water mark: back-pressure on the writer.");
        _framesReceived = Meter.CreateCounter<long>("flushbatching.frames.received", "{frame}", "Frames read from sockets.");
        _bytesReceived = Meter.CreateCounter<long>("flushbatching.bytes.received", "By", "Payload bytes read from sockets.");
        _framesPerSend = Meter.CreateHistogram("flushbatching.frames_per_send", "{frame}", "Frames in each send: how well writes are batched.", advice: FramesPerSendAdvice);
        _bytesPerSend = Meter.CreateHistogram("flushbatching.bytes_per_send", "By", "Bytes in each send.", advice: BytesPerSendAdvice);
        _queueDelay = Meter.CreateHistogram(
            "flushbatching.queue_delay",
            "s",
            "How long the oldest message of each send waited between its write and that send: what batching, and a connection busier than its socket, cost in latency.",
            advice: QueueDelayAdvice);
        Meter.CreateObservableUpDownCounter(
            "flushbatching.buffers.rented",
            () => new Measurement<long>(Volatile.Read(ref _buffersRented), _tags),
            "{buffer}",
            "Buffers rented from the connections' pool and not yet returned: level under steady load, back to zero when every connection is closed; growth is a leak.");
    }

    /// <summary>The instance connections use by default.</summary>
    public static FlushBatchingMetrics Shared { get; } = new();

    /// <summary>The Meter the instruments belong to.</summary>
    public Meter Meter { get; }

    /// <summary>The tag value for <paramref name="reason"/>, such as <c>burst-end</c>.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><see cref="FlushReason.None"/>, which is never recorded: no flush happened.</exception>
    public static string ReasonName(FlushReason reason) => reason switch
    {
        FlushReason.Count => "count",
        FlushReason.Bytes => "bytes",
        FlushReason.Interval => "interval",
        FlushReason.BurstEnd => "burst-end",
        FlushReason.Unbatched => "unbatched",
        FlushReason.ReadComplete => "read-complete",
        FlushReason.Drain => "drain",
        _ => throw new ArgumentOutOfRangeException(nameof(reason), reason, null),
    };

    /// <summary>
    /// When a message starts waiting, for <c>flushbatching.queue_delay</c>: now, while anyone listens to it; otherwise
    /// 0, and no clock is read. A send whose start is 0 records no queue delay, so a listener that attaches while a
    /// message waits records nothing for that send rather than a wait measured from a later moment.
    /// </summary>
    internal long QueueDelayStart(TimeProvider time) => _queueDelay.Enabled ? time.GetTimestamp() : 0;

    /// <summary>Records one flush that went out as one send of <paramref name="frames"/> frames.</summary>
    /// <param name="frames">The frames in the send.</param>
    /// <param name="bytes">The bytes in the send.</param>
    /// <param name="reason">Why it was flushed.</param>
    /// <param name="queueDelayStart">
    /// When its oldest frame started waiting (at most: see docs/metrics.md), from <see cref="QueueDelayStart"/> or a
    /// clock read made anyway; 0 records no queue delay. The clock is read again only while anyone listens.
    /// </param>
    /// <param name="time">The clock <paramref name="queueDelayStart"/> was read from.</param>
    internal void RecordSend(int frames, long bytes, FlushReason reason, long queueDelayStart, TimeProvider time)
    {
        var tags = _tags.AsSpan();
        _flushes.Add(1, _reasonTags[(int)reason]);
        _framesSent.Add(frames, tags);
        _bytesSent.Add(bytes, tags);
        _framesPerSend.Record(frames, tags);
        _bytesPerSend.Record(bytes, tags);
        if (queueDelayStart != 0 && _queueDelay.Enabled)
        {
            _queueDelay.Record(time.GetElapsedTime(queueDelayStart).TotalSeconds, tags);
        }
    }

    /// <summary>Records one write refused by back-pressure (not by a closed connection).</summary>
    internal void RecordRefused() => _writesRefused.Add(1, _tags.AsSpan());

    /// <summary>Records a buffer rented from a connection's pool.</summary>
    internal void RecordBufferRented() => Interlocked.Increment(ref _buffersRented);

    /// <summary>Records a buffer given back to a connection's pool.</summary>
    internal void RecordBufferReturned() => Interlocked.Decrement(ref _buffersRented);

    /// <summary>Records frames read from a socket.</summary>
    internal void RecordReceived(long frames, long bytes)
    {
        if (frames > 0)
        {
            _framesReceived.Add(frames, _tags.AsSpan());
            _bytesReceived.Add(bytes, _tags.AsSpan());
        }
    }

    /// <inheritdoc />
    public void Dispose() => Meter.Dispose();
}
