using Akka.Hosting;
using Akka.Remote.Hosting;
using FlushBatching.Akka.Hosting.Tests.Support;
using Microsoft.Extensions.Logging;

namespace FlushBatching.Akka.Hosting.Tests;

/// <summary>What a user sees when a value is wrong: the host refuses to start, and its first error line says why.</summary>
public sealed class StartupErrorTests
{
    private const string Expected = "Invalid value '0' for 'batching.max-pending-writes': allowed is a whole number from 1 to 65536.";

    [Fact]
    public async Task A_bad_option_stops_the_host_at_start_with_a_message_naming_the_key()
    {
        var port = HostedNode.FreePort();
        var node = HostedNode.Create(port, b => b.WithRemoting("127.0.0.1", port).WithFlushBatching(o => o.MaxPendingWrites = 0));

        // Thrown by StartAsync itself, before the ActorSystem starts: the message an unhandled exception prints first.
        var error = await Assert.ThrowsAsync<InvalidSettingException>(() => node.Host.StartAsync());

        Assert.Equal(Expected, error.Message);
    }

    [Fact]
    public async Task A_bad_value_in_hocon_under_Akka_Hosting_is_the_first_error_line_of_the_host_s_log()
    {
        var port = HostedNode.FreePort();
        var node = HostedNode.Create(port, b => b
            .WithRemoting("127.0.0.1", port)
            .AddHocon("akka.remote.dot-netty.tcp { transport-class = \"FlushBatching.Akka.BatchingTcpTransport, FlushBatching.Akka\", batching.max-pending-writes = 0 }", HoconAddMode.Prepend));

        // Akka.Remote wraps the transport's exception four deep and logs "Remoting error: [Startup failed] []"; the
        // host's own line is "Unable to start AkkaHostedService". The transport's line must come before both.
        await Assert.ThrowsAnyAsync<Exception>(() => node.Host.StartAsync());

        var first = node.Logs.Lines.First(l => l.Level >= LogLevel.Error);
        Assert.Contains(Expected, first.Message);
    }
}
