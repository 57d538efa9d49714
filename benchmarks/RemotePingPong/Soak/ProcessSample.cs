using System.Diagnostics;
using System.Diagnostics.Metrics;
using DotNetty.Buffers;
using FlushBatching.Diagnostics;

namespace RemotePingPong.Soak;

/// <summary>
/// What one process holds and has spent at one moment: the soak's sample. Holdings (memory, buffers, descriptors,
/// threads) must stay level under steady load; spendings (CPU, gen2 collections) are turned into rates between samples.
/// </summary>
/// <param name="RentedBuffers">FlushBatching's <c>flushbatching.buffers.rented</c>, summed over every Meter instance.</param>
/// <param name="DotNettyBuffers">Buffers out of DotNetty's default pooled allocator, which the DotNetty stack (and stock Akka.Remote) write with.</param>
public sealed record ProcessSample(
    double WorkingSetMb,
    double GcHeapMb,
    int Gen2Collections,
    long RentedBuffers,
    long DotNettyBuffers,
    int OpenFiles,
    int Threads,
    double CpuMs)
{
    private static readonly Lock ListenerLock = new();
    private static MeterListener? _listener;
    private static long _rented;

    /// <summary>This process, now.</summary>
    public static ProcessSample Now()
    {
        using var process = Process.GetCurrentProcess();
        return new ProcessSample(
            process.WorkingSet64 / 1048576.0,
            GC.GetGCMemoryInfo().HeapSizeBytes / 1048576.0,
            GC.CollectionCount(2),
            RentedNow(),
            DotNettyNow(),
            Directory.GetFileSystemEntries("/proc/self/fd").Length,
            process.Threads.Count,
            process.TotalProcessorTime.TotalMilliseconds);
    }

    // Read as dotnet-counters would: a listener on the FlushBatching Meter, observed on demand.
    private static long RentedNow()
    {
        lock (ListenerLock)
        {
            if (_listener is null)
            {
                _listener = new MeterListener
                {
                    InstrumentPublished = (instrument, listener) =>
                    {
                        if (instrument.Meter.Name == FlushBatchingMetrics.MeterName && instrument.Name == "flushbatching.buffers.rented")
                        {
                            listener.EnableMeasurementEvents(instrument);
                        }
                    },
                };
                _listener.SetMeasurementEventCallback<long>((_, value, _, _) => _rented += value);
                _listener.Start();
            }

            _rented = 0;
            _listener.RecordObservableInstruments();
            return _rented;
        }
    }

    private static long DotNettyNow() =>
        PooledByteBufferAllocator.Default.Metric.HeapArenas().Sum(arena => arena.NumActiveAllocations) +
        PooledByteBufferAllocator.Default.Metric.DirectArenas().Sum(arena => arena.NumActiveAllocations);
}
