namespace FlushBatching.Akka.Hosting;

/// <summary>What runs the DotNetty stack's event loops (<c>event-loop</c>); the sockets stack has none.</summary>
public enum DotNettyEventLoop
{
    /// <summary>
    /// <c>thread-pool</c>, the default: each loop borrows the .NET thread pool's threads for its work. A message handed
    /// from Akka's dispatcher wakes no sleeping thread, so less CPU per message at light load; a thread pool starved by
    /// blocking work delays the connections' I/O with it.
    /// </summary>
    ThreadPool,

    /// <summary>
    /// <c>dedicated</c>: DotNetty's own loops, a thread each, as stock Akka.Remote runs them. I/O that a starved thread
    /// pool does not hold up, and DotNetty's threading contract whole, for a thread woken per hand-off.
    /// </summary>
    Dedicated,
}
