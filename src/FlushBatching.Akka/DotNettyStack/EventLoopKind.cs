namespace FlushBatching.Akka.DotNettyStack;

/// <summary>What runs the DotNetty stack's event loops: the transport section's <c>event-loop</c>.</summary>
internal enum EventLoopKind
{
    /// <summary>
    /// <c>thread-pool</c>: <see cref="ThreadPoolEventLoop"/>s, which borrow the .NET thread pool's threads for each turn.
    /// A hand-off from Akka's dispatcher wakes no sleeping thread, so less CPU per message at light load; but a thread
    /// pool starved by blocking work delays the connections' I/O with it.
    /// </summary>
    ThreadPool,

    /// <summary>
    /// <c>dedicated</c>: DotNetty's own <c>SingleThreadEventLoop</c>s, a thread each, as stock Akka.Remote runs them:
    /// DotNetty's threading contract whole (its task scheduler, its per-thread buffer caches and Recycler on the threads
    /// they were built for), I/O that a starved thread pool does not hold up, and a thread woken per hand-off.
    /// </summary>
    Dedicated,
}
