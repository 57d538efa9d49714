using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using FlushBatching.Diagnostics;

namespace FlushBatching.Benchmarks.Shared;

/// <summary>
/// Counts the frames, sends and flushes by reason recorded on every FlushBatching Meter in this process, shared by the
/// benchmark programs.
/// </summary>
internal sealed class FrameCounter : IDisposable
{
    private readonly MeterListener _listener = new();
    private readonly ConcurrentDictionary<string, long> _flushes = new();
    private long _frames;
    private long _sends;

    public FrameCounter()
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == FlushBatchingMetrics.MeterName
                && instrument.Name is "flushbatching.frames.sent" or "flushbatching.flushes")
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
        _listener.Start();
    }

    public Snapshot Take() => new(Interlocked.Read(ref _frames), Interlocked.Read(ref _sends), new Dictionary<string, long>(_flushes));

    public void Dispose() => _listener.Dispose();

    /// <summary>The counters at one moment; <see cref="Since"/> gives what happened between two.</summary>
    public sealed record Snapshot(long Frames, long Sends, Dictionary<string, long> Flushes)
    {
        public Snapshot Since(Snapshot before) => new(
            Frames - before.Frames,
            Sends - before.Sends,
            Flushes.ToDictionary(f => f.Key, f => f.Value - before.Flushes.GetValueOrDefault(f.Key)));
    }
}
