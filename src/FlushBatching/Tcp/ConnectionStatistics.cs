using FlushBatching.Batching;

namespace FlushBatching.Tcp;

/// <summary>A snapshot of one connection's counters; the same figures the Meter sums over all connections.</summary>
public readonly record struct ConnectionStatistics
{
    /// <summary>Frames handed to the socket.</summary>
    public long FramesSent { get; init; }

    /// <summary>Bytes handed to the socket, length prefixes included.</summary>
    public long BytesSent { get; init; }

    /// <summary>Gathered sends issued to the socket: one per flush.</summary>
    public long Sends { get; init; }

    /// <summary>Frames delivered to the handler.</summary>
    public long FramesReceived { get; init; }

    /// <summary>Payload bytes delivered to the handler.</summary>
    public long BytesReceived { get; init; }

    /// <summary>Flushes forced by <see cref="BatchingSettings.MaxPendingWrites"/>.</summary>
    public long CountFlushes { get; init; }

    /// <summary>Flushes forced by <see cref="BatchingSettings.MaxPendingBytes"/>.</summary>
    public long BytesFlushes { get; init; }

    /// <summary>Flushes forced by <see cref="BatchingSettings.FlushInterval"/>.</summary>
    public long IntervalFlushes { get; init; }

    /// <summary>Flushes made because the burst ended.</summary>
    public long BurstEndFlushes { get; init; }

    /// <summary>Flushes of single writes while batching is off.</summary>
    public long UnbatchedFlushes { get; init; }

    /// <summary>The average number of frames per send; 0 before the first send.</summary>
    public double FramesPerSend => Sends == 0 ? 0 : (double)FramesSent / Sends;
}
