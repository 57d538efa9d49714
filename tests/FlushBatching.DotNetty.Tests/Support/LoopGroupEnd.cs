using DotNetty.Transport.Channels;
using FlushBatching.Tests.Support;
using Xunit.Abstractions;

namespace FlushBatching.DotNetty.Tests.Support;

/// <summary>
/// Ends a test's own <see cref="MultithreadEventLoopGroup"/> as docs/dotnetty.md tells users to: every channel closed
/// and its close awaited first, then the group shut down with no quiet period. A loop that still has not terminated
/// after its timeout and <see cref="Poll.Patience"/> more is in DotNetty 0.7.6's shutdown spin (docs/dotnetty.md: a task
/// that reaches a loop as it terminates keeps it running its own wake-up task for ever). That is DotNetty's, not the
/// handler's under test: it is named on the test's output and left to the end of the process (DotNetty's loop threads
/// are background threads), never waited on for ever, as these tests once did when a CI run was killed as hung in this
/// project after 5 minutes. That the shutdown was what hung there is not shown: 400 shutdowns in the tests' old pattern
/// (with and without TLS and the handler, beside load) all terminated.
/// </summary>
public static class LoopGroupEnd
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(2);

    public static async Task EndAsync(MultithreadEventLoopGroup group, IEnumerable<IChannel?> channels, ITestOutputHelper output)
    {
        foreach (var channel in channels.OfType<IChannel>().Distinct())
        {
            await Poll.Within(channel.CloseAsync(), "a channel's close");
            await Poll.Within(channel.CloseCompletion, "a channel's close to complete");
        }

        var terminated = group.ShutdownGracefullyAsync(TimeSpan.Zero, Timeout);
        if (await Task.WhenAny(terminated, Task.Delay(Timeout + Poll.Patience)) != terminated)
        {
            output.WriteLine($"DotNetty's event loops did not terminate within {(Timeout + Poll.Patience).TotalSeconds:0} s of their shutdown " +
                "(DotNetty 0.7.6's shutdown spin, docs/dotnetty.md); left to the end of the process.");
        }
    }
}
