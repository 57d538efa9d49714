namespace FlushBatching.Tests.Support;

/// <summary>
/// A clock that moves only when told: by <see cref="Advance"/>, and by <see cref="TickPerRead"/> each time it is
/// read, which stands in for the time a drain takes per frame.
/// </summary>
public sealed class ManualClock : TimeProvider
{
    private long _ticks = TimeSpan.TicksPerDay;

    public TimeSpan TickPerRead { get; set; }

    public override long TimestampFrequency => TimeSpan.TicksPerSecond;

    public override long GetTimestamp() => Interlocked.Add(ref _ticks, TickPerRead.Ticks);

    public void Advance(TimeSpan by) => Interlocked.Add(ref _ticks, by.Ticks);
}
