using FlushBatching.Akka.DotNettyStack;
using FlushBatching.Akka.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>The shared transport suite against <see cref="DotNettyBatchingTransport"/>, on each kind of event loop it offers.</summary>
public abstract class DotNettyBatchingTransportTests : TransportSuite
{
    protected override string TransportClass => Node.DotNettyBatching;

    /// <summary>On <see cref="ThreadPoolEventLoop"/>s, the default.</summary>
    public sealed class OnThreadPoolLoops : DotNettyBatchingTransportTests
    {
        protected override string StackSection => "event-loop = thread-pool";

        protected override string ListeningTags => "flushbatching.event_loop=thread-pool flushbatching.stack=dotnetty";
    }

    /// <summary>On DotNetty's own loops, a thread each.</summary>
    public sealed class OnDedicatedLoops : DotNettyBatchingTransportTests
    {
        /// <summary>
        /// The hundred thousand messages on two settings here, not six: the batching settings reach the same handler on
        /// either kind of loop, and the thread-pool loops run all six (CI's half-minute each).
        /// </summary>
        public static new TheoryData<string> ExtremeSettings => new() { "batching.enabled = on", "batching.max-pending-writes = 1" };

        protected override string StackSection => "event-loop = dedicated";

        protected override string ListeningTags => "flushbatching.event_loop=dedicated flushbatching.stack=dotnetty";
    }
}
