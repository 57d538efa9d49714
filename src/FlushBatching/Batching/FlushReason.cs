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

    /// <summary>
    /// A read completed: replies written while handling it go out together (a pipeline handler's trigger; the core's
    /// connections end such bursts with <see cref="BurstEnd"/>).
    /// </summary>
    ReadComplete,

    /// <summary>Everything pending was sent ahead of a close, disconnect, error, handler removal or loss of writability.</summary>
    Drain,
}
