using System.Globalization;

namespace FlushBatching.Batching;

/// <summary>
/// When pending writes are flushed: after <see cref="MaxPendingWrites"/> writes, after
/// <see cref="MaxPendingBytes"/> bytes, once the oldest pending write has been held <see cref="FlushInterval"/>,
/// or when the burst ends (nothing more is queued), whichever comes first.
/// </summary>
/// <remarks>
/// Immutable; every value is checked in one constructor, so an instance is always valid. A refusal names the key
/// of Akka.Remote's <c>batching { }</c> block that sets the value, where the Akka transport reads it from; there
/// every key of that block is honoured.
/// </remarks>
public sealed record BatchingSettings
{
    /// <summary>Batching is on by default: with burst-end flushing it costs light traffic nothing.</summary>
    internal const bool DefaultEnabled = true;

    /// <summary>30 writes, Akka.Remote's own default, so existing tuning carries over.</summary>
    internal const int DefaultMaxPendingWrites = 30;

    /// <summary>16 KiB: Akka.Remote's documented default; large enough for a full send of small messages.</summary>
    internal const long DefaultMaxPendingBytes = 16 * 1024;

    /// <summary>
    /// The largest <see cref="MaxPendingWrites"/>: 65536 frames in one send is far past the point of any gain.
    /// </summary>
    internal const int MaxPendingWritesLimit = 65536;

    /// <summary>The largest <see cref="MaxPendingBytes"/>: 64 MiB bounds one batch's memory.</summary>
    internal const long MaxPendingBytesLimit = 64L * 1024 * 1024;

    /// <summary>The largest <see cref="FlushInterval"/>: one hour. Anything longer is a mistake in units.</summary>
    internal static readonly TimeSpan FlushIntervalLimit = TimeSpan.FromHours(1);

    /// <summary>40 ms, Akka.Remote's documented default; a bound on holding, not a delay: bursts end sooner.</summary>
    internal static readonly TimeSpan DefaultFlushInterval = TimeSpan.FromMilliseconds(40);

    private BatchingSettings(bool enabled, int maxPendingWrites, long maxPendingBytes, TimeSpan flushInterval)
    {
        if (maxPendingWrites is < 1 or > MaxPendingWritesLimit)
        {
            throw new InvalidSettingException(SettingKeys.MaxPendingWrites, maxPendingWrites.ToString(CultureInfo.InvariantCulture), $"a whole number from 1 to {MaxPendingWritesLimit}");
        }

        if (maxPendingBytes is < 1 or > MaxPendingBytesLimit)
        {
            throw new InvalidSettingException(SettingKeys.MaxPendingBytes, SettingText.FormatSize(maxPendingBytes), $"a size from 1b to {SettingText.FormatSize(MaxPendingBytesLimit)}");
        }

        if (flushInterval <= TimeSpan.Zero || flushInterval > FlushIntervalLimit)
        {
            throw new InvalidSettingException(SettingKeys.FlushInterval, SettingText.FormatDuration(flushInterval), $"a duration above 0 and at most {SettingText.FormatDuration(FlushIntervalLimit)}");
        }

        Enabled = enabled;
        MaxPendingWrites = maxPendingWrites;
        MaxPendingBytes = maxPendingBytes;
        FlushInterval = flushInterval;
    }

    /// <summary>The defaults: on, 30 writes, 16 KiB, 40 ms.</summary>
    public static BatchingSettings Default { get; } = new(DefaultEnabled, DefaultMaxPendingWrites, DefaultMaxPendingBytes, DefaultFlushInterval);

    /// <summary>Whether writes are batched at all; when off, every write is sent by itself.</summary>
    /// <value>The default is <c>true</c>.</value>
    public bool Enabled { get; }

    /// <summary>
    /// How many pending writes force a flush. Larger batches mean fewer syscalls but more bytes held per send.
    /// </summary>
    /// <value>The default is 30.</value>
    public int MaxPendingWrites { get; }

    /// <summary>How many pending bytes (frame headers included) force a flush.</summary>
    /// <value>The default is 16 KiB.</value>
    public long MaxPendingBytes { get; }

    /// <summary>
    /// The longest a write is held while more writes keep arriving. Bursts that end sooner are flushed at
    /// once, so this bounds the worst case under sustained load and never delays light traffic.
    /// </summary>
    /// <value>The default is 40 ms.</value>
    public TimeSpan FlushInterval { get; }

    /// <summary>Returns a copy with <see cref="Enabled"/> set.</summary>
    public BatchingSettings WithEnabled(bool enabled) => new(enabled, MaxPendingWrites, MaxPendingBytes, FlushInterval);

    /// <summary>Returns a copy with <see cref="MaxPendingWrites"/> set; throws if it is out of range.</summary>
    public BatchingSettings WithMaxPendingWrites(int writes) => new(Enabled, writes, MaxPendingBytes, FlushInterval);

    /// <summary>Returns a copy with <see cref="MaxPendingBytes"/> set; throws if it is out of range.</summary>
    public BatchingSettings WithMaxPendingBytes(long bytes) => new(Enabled, MaxPendingWrites, bytes, FlushInterval);

    /// <summary>Returns a copy with <see cref="FlushInterval"/> set; throws if it is out of range.</summary>
    public BatchingSettings WithFlushInterval(TimeSpan interval) => new(Enabled, MaxPendingWrites, MaxPendingBytes, interval);

    /// <summary>The settings as HOCON, such as <c>enabled = on, max-pending-writes = 30, ...</c>; fit for a log line.</summary>
    public override string ToString() =>
        $"{SettingKeys.Enabled} = {(Enabled ? "on" : "off")}, {SettingKeys.MaxPendingWrites} = {MaxPendingWrites}, " +
        $"{SettingKeys.MaxPendingBytes} = {SettingText.FormatSize(MaxPendingBytes)}, {SettingKeys.FlushInterval} = {SettingText.FormatDuration(FlushInterval)}";
}
