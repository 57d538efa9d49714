namespace FlushBatching.Batching;

/// <summary>
/// Decides when pending writes are flushed: on the first of <see cref="BatchingSettings.MaxPendingWrites"/>
/// writes, <see cref="BatchingSettings.MaxPendingBytes"/> bytes, the oldest write having been held
/// <see cref="BatchingSettings.FlushInterval"/>, or the end of the burst. The one piece of batching logic that
/// the core's connections and the DotNetty handler share.
/// </summary>
/// <remarks>
/// Not thread-safe: the single writer that owns a connection's output (the core's send loop, or a DotNetty
/// channel's event loop) calls it. Time comes from the given <see cref="TimeProvider"/>, which it reads only
/// while writes are pending, so tests drive it and an idle connection costs nothing: no timer is needed while
/// nothing is pending, and <see cref="TimeUntilDue"/> says when one is.
/// </remarks>
internal sealed class FlushPolicy
{
    private readonly BatchingSettings _settings;
    private readonly TimeProvider _time;

    /// <summary>Creates a policy with nothing pending.</summary>
    public FlushPolicy(BatchingSettings settings, TimeProvider timeProvider)
    {
        ArgumentNullException.ThrowIfNull(settings);
        ArgumentNullException.ThrowIfNull(timeProvider);
        _settings = settings;
        _time = timeProvider;
    }

    /// <summary>The settings this policy applies.</summary>
    public BatchingSettings Settings => _settings;

    /// <summary>How many writes are pending since the last flush.</summary>
    public int PendingWrites { get; private set; }

    /// <summary>How many bytes are pending since the last flush.</summary>
    public long PendingBytes { get; private set; }

    /// <summary>
    /// When the oldest pending write was recorded, as a timestamp of the policy's <see cref="TimeProvider"/>: the one
    /// clock read a batch's start takes, for its interval and for a caller's queue-delay metric. Read only while
    /// batching is on (off, every write is flushed alone and no clock is read); meaningless while nothing is pending.
    /// </summary>
    public long PendingSince { get; private set; }

    /// <summary>Whether any write is pending.</summary>
    public bool HasPending => PendingWrites > 0;

    /// <summary>Records one pending write of <paramref name="bytes"/> bytes and says whether to flush now.</summary>
    /// <returns>The reason to flush now, or <see cref="FlushReason.None"/> to keep gathering.</returns>
    public FlushReason OnWrite(long bytes)
    {
        PendingWrites++;
        PendingBytes += bytes;
        if (!_settings.Enabled)
        {
            return FlushReason.Unbatched;
        }

        if (PendingWrites == 1)
        {
            PendingSince = _time.GetTimestamp();
        }
        else if (_time.GetElapsedTime(PendingSince) >= _settings.FlushInterval)
        {
            return FlushReason.Interval;
        }

        if (PendingWrites >= _settings.MaxPendingWrites)
        {
            return FlushReason.Count;
        }

        return PendingBytes >= _settings.MaxPendingBytes ? FlushReason.Bytes : FlushReason.None;
    }

    /// <summary>Says whether to flush because nothing more is queued.</summary>
    /// <returns><see cref="FlushReason.BurstEnd"/> when writes are pending, else <see cref="FlushReason.None"/>.</returns>
    public FlushReason OnBurstEnd() => HasPending ? FlushReason.BurstEnd : FlushReason.None;

    /// <summary>Says whether the oldest pending write has been held <see cref="BatchingSettings.FlushInterval"/>.</summary>
    /// <returns><see cref="FlushReason.Interval"/> when it has, else <see cref="FlushReason.None"/>.</returns>
    public FlushReason OnTimer() =>
        HasPending && _time.GetElapsedTime(PendingSince) >= _settings.FlushInterval ? FlushReason.Interval : FlushReason.None;

    /// <summary>
    /// How long until the oldest pending write is due by <see cref="BatchingSettings.FlushInterval"/>, for
    /// arming a timer; <c>null</c> while nothing is pending, when no timer should run.
    /// </summary>
    public TimeSpan? TimeUntilDue
    {
        get
        {
            if (!HasPending)
            {
                return null;
            }

            var remaining = _settings.FlushInterval - _time.GetElapsedTime(PendingSince);
            return remaining > TimeSpan.Zero ? remaining : TimeSpan.Zero;
        }
    }

    /// <summary>Records that everything pending was flushed.</summary>
    public void OnFlushed()
    {
        PendingWrites = 0;
        PendingBytes = 0;
    }
}
