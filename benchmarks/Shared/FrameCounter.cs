using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using FlushBatching.Diagnostics;
using HdrHistogram;

namespace FlushBatching.Benchmarks.Shared;

/// <summary>
/// Counts the frames, sends and flushes by reason recorded on every FlushBatching Meter in this process, and keeps the
/// sends' queue delays in a histogram; shared by the benchmark programs.
/// </summary>
internal sealed class FrameCounter : IDisposable
{
    private readonly MeterListener _listener = new();
    private readonly ConcurrentDictionary<string, long> _flushes = new();

    // Nanoseconds, from 1 ns to 100 s at 3 significant digits; written by every send loop, read between rows.
    private readonly Recorder _queueDelays = HistogramFactory.With64BitBucketSize()
        .WithValuesFrom(1).WithValuesUpTo(100_000_000_000).WithPrecisionOf(3).WithThreadSafeWrites().WithThreadSafeReads().Create();

    private long _frames;
    private long _sends;

    public FrameCounter()
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == FlushBatchingMetrics.MeterName
                && instrument.Name is "flushbatching.frames.sent" or "flushbatching.flushes" or "flushbatching.queue_delay")
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            switch (instrument.Name)
            {
                case "flushbatching.frames.sent":
                    Interlocked.Add(ref _frames, value);
                    break;
                default:
                    Interlocked.Add(ref _sends, value);
                    foreach (var tag in tags)
                    {
                        if (tag.Key == "reason" && tag.Value is string reason)
                        {
                            _flushes.AddOrUpdate(reason, value, (_, total) => total + value);
                        }
                    }

                    break;
            }
        });
        _listener.SetMeasurementEventCallback<double>((_, seconds, _, _) => _queueDelays.RecordValue(Math.Max(1, (long)(seconds * 1e9))));
        _listener.Start();
    }

    /// <summary>The counters now, and the queue delays of the sends since the previous call.</summary>
    public Snapshot Take()
    {
        var delays = _queueDelays.GetIntervalHistogram();
        return new(
            Interlocked.Read(ref _frames),
            Interlocked.Read(ref _sends),
            new Dictionary<string, long>(_flushes),
            delays.TotalCount > 0 ? delays.GetValueAtPercentile(50) / 1000.0 : null,
            delays.TotalCount > 0 ? delays.GetValueAtPercentile(99) / 1000.0 : null);
    }

    public void Dispose() => _listener.Dispose();

    /// <summary>
    /// The counters at one moment, and the median and 99th percentile queue delay [us] of the sends since the snapshot
    /// before it; <see cref="Since"/> gives what happened between two taken one after the other.
    /// </summary>
    public sealed record Snapshot(long Frames, long Sends, Dictionary<string, long> Flushes, double? QueueDelayP50Us, double? QueueDelayP99Us)
    {
        public Snapshot Since(Snapshot before) => new(
            Frames - before.Frames,
            Sends - before.Sends,
            Flushes.ToDictionary(f => f.Key, f => f.Value - before.Flushes.GetValueOrDefault(f.Key)),
            QueueDelayP50Us,
            QueueDelayP99Us);
    }
}
