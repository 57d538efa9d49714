using Akka.Configuration;
using FlushBatching.Akka.DotNettyStack;

namespace FlushBatching.Akka.Tests.Support;

/// <summary>The DotNetty stack's loop kinds as a theory names them: the values of <c>event-loop</c>.</summary>
internal static class DotNettyLoops
{
    /// <summary>The kind <paramref name="eventLoop"/> names, read as the transport reads it.</summary>
    public static EventLoopKind Parse(string eventLoop) =>
        BatchingTransportSettings.Create(ConfigurationFactory.ParseString($"event-loop = {eventLoop}")).EventLoop;
}
