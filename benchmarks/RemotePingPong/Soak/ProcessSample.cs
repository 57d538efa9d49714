using System.Diagnostics;
using System.Diagnostics.Metrics;
using DotNetty.Buffers;
using FlushBatching.Diagnostics;

namespace RemotePingPong.Soak;

/// <summary>
/// What one process holds and has spent at one moment: the soak's sample. Holdings (memory, buffers, descriptors,
/// threads) must stay level under steady load; spendings (CPU, gen2 collections) are turned into rates between samples.
/// </summary>
/// <param name="LiveHeapMb">What the GC heap holds after a full, compacting collection: live objects only, so that
/// growth means something is kept that should not be, not that the GC chose to collect later.</param>
/// <param name="DotNettyPoolMb">The chunks DotNetty's pooled allocator holds in its heap and direct arenas (both are
/// managed arrays, counted in the two above): it takes a 16 MB chunk per arena as threads first use it and keeps it, so
/// it climbs in steps to a bound.</param>
/// <param name="Gen2Collections">Gen2 collections so far, the sampler's own forced ones left out.</param>
/// <param name="RentedBuffers">FlushBatching's <c>flushbatching.buffers.rented</c>, summed over every Meter instance.</param>
/// <param name="DotNettyBuffers">Buffers out of DotNetty's default pooled allocator, which the DotNetty stack (and stock Akka.Remote) write with.</param>
public sealed record ProcessSample(
    double WorkingSetMb,
    double LiveHeapMb,
    double DotNettyPoolMb,
    int Gen2Collections,
    long RentedBuffers,
    long DotNettyBuffers,
    int OpenFiles,
    int Threads,
    double CpuMs)
{
    /// <summary>The most <see cref="DotNettyPoolMb"/> can reach with every arena holding one chunk.</summary>
    public static double DotNettyPoolBoundMb =>
        (PooledByteBufferAllocator.Default.Metric.HeapArenas().Count + PooledByteBufferAllocator.Default.Metric.DirectArenas().Count) *
        (double)PooledByteBufferAllocator.Default.Metric.ChunkSize / 1048576;

    private static readonly Lock ListenerLock = new();
    private static MeterListener? _listener;
    private static long _rented;
    private static int _forcedCollections;

    /// <summary>This process, now, after a full collection.</summary>
    public static ProcessSample Now()
    {
        var gen2 = GC.CollectionCount(2) - _forcedCollections;
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        _forcedCollections++;
        using var process = Process.GetCurrentProcess();
        return new ProcessSample(
            process.WorkingSet64 / 1048576.0,
            GC.GetTotalMemory(forceFullCollection: false) / 1048576.0,
            (PooledByteBufferAllocator.Default.Metric.UsedHeapMemory + PooledByteBufferAllocator.Default.Metric.UsedDirectMemory) / 1048576.0,
            gen2,
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
