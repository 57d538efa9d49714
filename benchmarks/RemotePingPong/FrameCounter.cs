using System.Diagnostics.Metrics;
using FlushBatching.Diagnostics;

namespace RemotePingPong;

/// <summary>Counts the frames and sends this project's transports report on the FlushBatching Meter.</summary>
internal sealed class FrameCounter : IDisposable
{
    private readonly MeterListener _listener = new();
    private long _frames;
    private long _sends;

    public FrameCounter()
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == FlushBatchingMetrics.MeterName && instrument.Name is "flushbatching.frames.sent" or "flushbatching.sends")
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((instrument, value, _, _) =>
        {
            if (instrument.Name == "flushbatching.sends")
            {
                Interlocked.Add(ref _sends, value);
            }
            else
            {
                Interlocked.Add(ref _frames, value);
            }
        });
        _listener.Start();
    }

    public (long Frames, long Sends) Snapshot() => (Interlocked.Read(ref _frames), Interlocked.Read(ref _sends));

    public void Dispose() => _listener.Dispose();
}
