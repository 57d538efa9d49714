namespace FlushBatching.Tcp.Loops;

/// <summary>
/// The bound on a graceful close, one rule for both stacks: armed by the first close, it fires once
/// <see cref="ConnectionSettings.CloseTimeout"/> has passed, and the connection is then aborted, with a
/// <see cref="TimeoutException"/> naming the bytes its peer did not read when any are left (<see cref="AbortReason"/>),
/// in order when none are. A connection that ends first disarms it; one that ended while it was armed leaves nothing
/// to bound.
/// </summary>
/// <param name="settings">The connection's settings: its close bound and its clock.</param>
/// <param name="expired">Runs once at the bound, on a timer's thread: the connection aborts itself there.</param>
internal sealed class CloseDeadline(ConnectionSettings settings, Action expired)
{
    private ITimer? _timer;

    /// <summary>Starts the bound; the caller arms it once, at its first close.</summary>
    /// <param name="ended">Whether the connection has ended meanwhile: looked at once the timer exists.</param>
    public void Arm(Func<bool> ended)
    {
        Volatile.Write(ref _timer, settings.TimeProvider.CreateTimer(
            static state => ((Action)state!)(), expired, settings.CloseTimeout, Timeout.InfiniteTimeSpan));
        if (ended())
        {
            Disarm();
        }
    }

    /// <summary>Stops the bound, for a connection that has ended; harmless when unarmed or repeated.</summary>
    public void Disarm() => Interlocked.Exchange(ref _timer, null)?.Dispose();

    /// <summary>What a close aborted at the bound tells the connection's reader: <c>null</c> (in order) when nothing was left unsent.</summary>
    /// <param name="connection">The connection, as its <c>ToString</c> names both ends.</param>
    /// <param name="unsent">The bytes accepted and not sent when the bound passed.</param>
    public Exception? AbortReason(object connection, long unsent) =>
        unsent == 0 ? null : SetupTimeouts.CloseAborted(connection.ToString()!, settings.CloseTimeout, unsent);
}
