namespace FlushBatching.DotNetty;

/// <summary>
/// Written down the pipeline by a writer that queues its writes before the event loop runs them (a queue of its own,
/// drained in one task on the loop), just before the writes it drains: <see cref="BatchingWriterHandler"/> then counts
/// the <c>flushbatching.queue_delay</c> of the batch they start from <see cref="Timestamp"/>, not from when they reached
/// it, so the metric holds the wait for the event loop too. The handler takes it and passes nothing on; its write task
/// is complete at once.
/// </summary>
/// <remarks>
/// It holds for the writes up to the next flush that reaches the handler. A <see cref="Timestamp"/> of 0 records no
/// queue delay for that batch. Only <see cref="BatchingWriterHandler"/> takes it; any other handler passes it on
/// towards the socket, which refuses it.
/// </remarks>
/// <param name="timestamp">When the oldest of the writes that follow was queued, as <see cref="TimeProvider.GetTimestamp"/> of the handler's clock gives it.</param>
public sealed class WritesQueuedSince(long timestamp)
{
    /// <summary>When the oldest of the writes that follow was queued, as a timestamp of the handler's <see cref="TimeProvider"/>.</summary>
    public long Timestamp { get; } = timestamp;
}
