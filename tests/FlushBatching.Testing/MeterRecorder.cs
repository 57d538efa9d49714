using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using FlushBatching.Diagnostics;

namespace FlushBatching.Tests.Support;

/// <summary>Listens to one <see cref="FlushBatchingMetrics"/> instance, or to all, and keeps every measurement.</summary>
public sealed class MeterRecorder : IDisposable
{
    private readonly MeterListener _listener = new();
    private readonly object _observing = new();
    private string? _seriesOf;
    private List<(long Value, Dictionary<string, object?> Tags)>? _series;

    public MeterRecorder(FlushBatchingMetrics metrics)
        : this(meter => ReferenceEquals(meter, metrics.Meter))
    {
    }

    private MeterRecorder(Func<Meter, bool> listensTo)
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (listensTo(instrument.Meter))
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) => Record(instrument, value, tags));
        _listener.SetMeasurementEventCallback<int>((instrument, value, tags, _) => Record(instrument, value, tags));
        _listener.SetMeasurementEventCallback<double>((instrument, value, _, _) => Durations.Enqueue((instrument.Name, value)));
        _listener.Start();
    }

    public ConcurrentQueue<(string Instrument, long Value, string? Reason)> Measurements { get; } = new();

    /// <summary>
    /// Listens to every <see cref="FlushBatchingMetrics"/> instance, such as the one each Akka transport makes for
    /// itself: only for tests that run one at a time.
    /// </summary>
    public static MeterRecorder ForEveryInstance() => new(meter => meter.Name == FlushBatchingMetrics.MeterName);

    /// <summary>The measurements of the instruments that record doubles: durations in seconds.</summary>
    public ConcurrentQueue<(string Instrument, double Seconds)> Durations { get; } = new();

    public IEnumerable<double> Seconds(string instrument) => Durations.Where(m => m.Instrument == instrument).Select(m => m.Seconds);

    public long Sum(string instrument, string? reason = null) =>
        Measurements.Where(m => m.Instrument == instrument && (reason is null || m.Reason == reason)).Sum(m => m.Value);

    public IEnumerable<long> Values(string instrument) => Measurements.Where(m => m.Instrument == instrument).Select(m => m.Value);

    /// <summary>What the observable <paramref name="instrument"/> reads now.</summary>
    public long Observe(string instrument)
    {
        var before = Measurements.Count(m => m.Instrument == instrument);
        _listener.RecordObservableInstruments();
        return Values(instrument).Skip(before).Single();
    }

    /// <summary>What the observable <paramref name="instrument"/> reads now: one value per series, with the series' tags.</summary>
    public IReadOnlyList<(long Value, Dictionary<string, object?> Tags)> ObserveSeries(string instrument)
    {
        lock (_observing)
        {
            _series = [];
            _seriesOf = instrument;
            _listener.RecordObservableInstruments();
            var series = _series;
            _series = null;
            return series;
        }
    }

    private void Record(Instrument instrument, long value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        if (_series is not null && instrument.Name == _seriesOf)
        {
            _series.Add((value, tags.ToArray().ToDictionary(tag => tag.Key, tag => tag.Value)));
        }

        string? reason = null;
        foreach (var tag in tags)
        {
            if (tag.Key == "reason")
            {
                reason = (string?)tag.Value;
            }
        }

        Measurements.Enqueue((instrument.Name, value, reason));
    }

    public void Dispose() => _listener.Dispose();
}
