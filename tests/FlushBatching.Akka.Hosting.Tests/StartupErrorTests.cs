using Akka.Actor;
using Akka.Hosting;
using Akka.Remote.Hosting;
using FlushBatching.Akka.Hosting.Tests.Support;
using FlushBatching.Tests.Support;
using Microsoft.Extensions.Logging;

namespace FlushBatching.Akka.Hosting.Tests;

/// <summary>What a user sees when a value is wrong: the host refuses to start, and its first error line says why.</summary>
public sealed class StartupErrorTests
{
    private const string Expected = "Invalid value '0' for 'batching.max-pending-writes': allowed is a whole number from 1 to 65536.";

    [Fact]
    public async Task A_bad_option_stops_the_host_at_start_with_a_message_naming_the_key()
    {
        var port = RawPeer.ClosedEndPoint().Port;
        var node = HostedNode.Create(b => b.WithRemoting("127.0.0.1", port).WithFlushBatching(o => o.MaxPendingWrites = 0));

        // Thrown by StartAsync itself, before the ActorSystem starts: the message an unhandled exception prints first.
        var error = await Assert.ThrowsAsync<InvalidSettingException>(() => node.Host.StartAsync());

        Assert.Equal(Expected, error.Message);
    }

    [Fact]
    public async Task Options_bound_from_a_missing_section_stop_the_host_saying_to_pass_the_section_never_switch_the_node_on()
    {
        // Get<FlushBatchingOptions>() of a deleted section is null: taken as the defaults, it switched the node over.
        var port = RawPeer.ClosedEndPoint().Port;
        var node = HostedNode.Create(b => b.WithRemoting("127.0.0.1", port).WithFlushBatching((FlushBatchingOptions)null!));

        var error = await Assert.ThrowsAsync<ArgumentNullException>(() => node.Host.StartAsync());

        Assert.Contains("GetSection(\"FlushBatching\")", error.Message);
    }

    [Fact]
    public async Task A_bad_value_in_hocon_under_Akka_Hosting_is_the_first_error_line_Akka_logs()
    {
        var port = RawPeer.ClosedEndPoint().Port;
        var node = HostedNode.Create(b => b
            .WithRemoting("127.0.0.1", port)
            .AddHocon("akka.remote.dot-netty.tcp { transport-class = \"FlushBatching.Akka.BatchingTcpTransport, FlushBatching.Akka\", batching.max-pending-writes = thirty }", HoconAddMode.Prepend));

        await Assert.ThrowsAnyAsync<Exception>(() => node.Host.StartAsync());

        // Akka.Remote wraps the transport's exception four deep and logs "Remoting error: [Startup failed] []". Akka's
        // log reaches the host's loggers asynchronously, so the host's own "Unable to start AkkaHostedService" line may
        // come before or after it; among Akka's lines, the transport's must be the first error.
        await Poll.Until(() => node.Logs.Lines.Any(l => l.Level >= LogLevel.Error && l.Category.StartsWith("Akka.Actor", StringComparison.Ordinal)), "an error from Akka", seconds: 10);
        var first = node.Logs.Lines.First(l => l.Level >= LogLevel.Error && l.Category.StartsWith("Akka.Actor", StringComparison.Ordinal));
        Assert.Contains("Invalid value 'thirty' for 'batching.max-pending-writes': allowed is a whole number", first.Message);
    }

    [Fact]
    public async Task A_low_mark_that_only_the_node_s_own_frame_size_allows_starts_the_node_as_the_same_hocon_does()
    {
        // The high mark follows maximum-frame-size (eight frames): 32 MB here, so a 2 MB low mark is allowed.
        var port = RawPeer.ClosedEndPoint().Port;
        await using var node = await HostedNode.StartAsync(b => b
            .WithRemoting("127.0.0.1", port)
            .AddHocon("akka.remote.dot-netty.tcp.maximum-frame-size = 4MB", HoconAddMode.Prepend)
            .WithFlushBatching(o => o.WriteBufferLowWaterMark = 2 * 1024 * 1024));

        Assert.Equal(2 * 1024 * 1024, node.System.Settings.Config.GetByteSize("akka.remote.dot-netty.tcp.write-buffer-low-water-mark"));
        Assert.Equal(port, ((ExtendedActorSystem)node.System).Provider.DefaultAddress.Port);
    }

    [Fact]
    public async Task A_low_mark_above_the_node_s_high_mark_starts_the_node_with_the_default_low_mark_and_a_warning_naming_the_key()
    {
        // Judged by the transport against the node's whole section, as the same value written in HOCON is: stock's
        // DotNetty refuses such a low mark and keeps its own, so the default low mark applies here, with a WARNING.
        var port = RawPeer.ClosedEndPoint().Port;
        await using var node = await HostedNode.StartAsync(b => b.WithRemoting("127.0.0.1", port).WithFlushBatching(o => o.WriteBufferLowWaterMark = 2 * 1024 * 1024));

        await Poll.Until(() => node.Logs.Lines.Any(l => l.Level == LogLevel.Warning && l.Message.Contains("'write-buffer-low-water-mark = 2097152b' is taken as half write-buffer-high-water-mark", StringComparison.Ordinal)),
            "a WARNING naming the low mark", seconds: 10);
        Assert.Equal(port, ((ExtendedActorSystem)node.System).Provider.DefaultAddress.Port);
    }
}
