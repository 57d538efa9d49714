namespace FlushBatching.Batching;

/// <summary>Why pending writes were flushed; each reason is counted separately in the metrics.</summary>
public enum FlushReason
{
    /// <summary>No flush is due.</summary>
    None = 0,

    /// <summary><see cref="BatchingSettings.MaxPendingWrites"/> writes were pending.</summary>
    Count,

    /// <summary><see cref="BatchingSettings.MaxPendingBytes"/> bytes were pending.</summary>
    Bytes,

    /// <summary>The oldest pending write had been held <see cref="BatchingSettings.FlushInterval"/>.</summary>
    Interval,

    /// <summary>Nothing more was queued: the burst ended, so waiting would only add latency.</summary>
    BurstEnd,

    /// <summary>Batching is off, so each write is flushed by itself.</summary>
    Unbatched,
}
