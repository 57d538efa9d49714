using Akka.Actor;
using Akka.Event;
using Akka.Remote;
using FlushBatching.Akka.Tests.Support;
using FlushBatching.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// The end-to-end tests every FlushBatching transport class must pass, with real ActorSystems over loopback TCP.
/// Each transport class gets one derived class that names it; "stock" is Akka.Remote's own DotNetty transport.
/// </summary>
public abstract partial class TransportSuite
{
    /// <summary>Room left in a frame for Akka's envelope around a test message (recipient path, serializer, ...).</summary>
    protected const int EnvelopeRoom = 512;

    private static readonly TimeSpan AskTimeout = TimeSpan.FromSeconds(10);

    /// <summary>The transport class under test, as written in transport-class.</summary>
    protected abstract string TransportClass { get; }

    /// <summary>Lines every node this suite starts gets in its transport section: the variant of the stack under test.</summary>
    protected virtual string StackSection => "";

    /// <summary>Starts this suite's nodes, each with <see cref="StackSection"/>.</summary>
    protected NodeFactory Nodes => new(StackSection);

    public static TheoryData<string, string> Peers => new()
    {
        { "under-test", "under-test" },
        { "under-test", "stock" },
        { "stock", "under-test" },
    };

    public static TheoryData<string> ExtremeSettings => new()
    {
        "batching.enabled = off",
        "batching.enabled = on",
        "batching.max-pending-writes = 1",
        "batching.max-pending-bytes = 64m",
        "batching.flush-interval = 1ms",
        "batching.flush-interval = 5s",
    };

    protected string ClassOf(string which) => which == "stock" ? Node.Stock : TransportClass;

    [Fact]
    public async Task Start_logs_the_bound_address_and_the_batching_settings_in_effect()
    {
        await using var node = Nodes.Start("logs", TransportClass, "batching { max-pending-writes = 7, flush-interval = 3ms }");

        static bool IsStartLine(LogEvent e) => e.Message.ToString()!.Contains("FlushBatching transport listening on");
        await Poll.Until(() => node.Logs.Any(IsStartLine), "the start-up line");
        var line = Assert.Single(node.Logs, IsStartLine);
        Assert.Equal(LogLevel.InfoLevel, line.LogLevel());
        Assert.Contains(node.Address.ToString(), line.Message.ToString());
        Assert.Contains("max-pending-writes = 7", line.Message.ToString());
        Assert.Contains("flush-interval = 3ms", line.Message.ToString());
    }

    [Theory]
    [InlineData("max-inbound-connections = 100", "INFO", "at most 100 inbound connections (as set), at most 50 of them silent")]
    [InlineData("max-inbound-connections = 4", "WARNING", "at most 4 inbound connection(s) (as set), too few to serve a cluster")]
    [InlineData("max-inbound-connections = unbounded", "INFO", "inbound connections unbounded")]
    public async Task Start_says_the_bound_on_inbound_connections_and_warns_when_it_is_too_small_for_a_cluster(string setting, string level, string said)
    {
        await using var node = Nodes.Start("bound", TransportClass, setting);

        bool IsBoundLine(LogEvent e) => e.Message.ToString()!.Contains(said, StringComparison.Ordinal);
        await Poll.Until(() => node.Logs.Any(IsBoundLine), "the line on the inbound bound");
        Assert.Equal(level == "INFO" ? LogLevel.InfoLevel : LogLevel.WarningLevel, Assert.Single(node.Logs, IsBoundLine).LogLevel());
    }

    [Fact]
    public async Task Runs_under_a_section_of_its_own_with_keys_left_out_taken_from_reference_conf()
    {
        var hocon = $$"""
            akka.remote.enabled-transports = ["akka.remote.flushbatching.tcp"]
            akka.remote.flushbatching.tcp {
              transport-class = "{{TransportClass}}"
              applied-adapters = []
              hostname = 127.0.0.1
              port = 0
              batching.max-pending-writes = 9
            }
            """;
        await using var a = Nodes.Start("own", TransportClass, hocon: hocon);
        await using var b = Nodes.Start("own", TransportClass, hocon: hocon);
        b.System.ActorOf(Props.Create<Echo>(), "echo");

        Assert.Equal("over my own section", await (await b.Resolve(a, "echo")).Ask<string>("over my own section", AskTimeout));
        await Poll.Until(() => b.Logs.Any(e => e.Message.ToString()!.Contains("max-pending-writes = 9, max-pending-bytes = 16k, flush-interval = 40ms")), "the start-up line with the section's and the reference's values");
    }

    [Theory]
    [MemberData(nameof(Peers))]
    public async Task Tell_and_Ask_cross_between_nodes(string client, string server)
    {
        await using var a = Nodes.Start("client", ClassOf(client));
        await using var b = Nodes.Start("server", ClassOf(server));
        b.System.ActorOf(Props.Create<Echo>(), "echo");
        var echo = await b.Resolve(a, "echo");

        // Ask is a Tell each way: the request from a to b, the reply from b to a.
        Assert.Equal("hello", await echo.Ask<string>("hello", AskTimeout));
        var replies = await Task.WhenAll(Enumerable.Range(0, 200).Select(i => echo.Ask<int>(i, AskTimeout)));
        Assert.Equal(Enumerable.Range(0, 200), replies);
    }

    [Theory]
    [MemberData(nameof(Peers))]
    public async Task An_actor_deploys_remotely_and_its_death_is_watched(string deployer, string host)
    {
        await using var a = Nodes.Start("deployer", ClassOf(deployer));
        await using var b = Nodes.Start("host", ClassOf(host));

        var echo = a.System.ActorOf(Props.Create<Echo>().WithDeploy(new Deploy(new RemoteScope(b.Address))), "deployed");
        Assert.Equal(b.Address, echo.Path.Address);
        Assert.Equal("deployed here", await echo.Ask<string>("deployed here", AskTimeout));

        var terminated = new TaskCompletionSource<Terminated>(TaskCreationOptions.RunContinuationsAsynchronously);
        a.System.ActorOf(Props.Create(() => new Watcher(echo, terminated)));
        echo.Tell(PoisonPill.Instance);
        Assert.Equal(echo, (await Poll.Within(terminated.Task)).ActorRef);
    }

    [Theory]
    [InlineData("under-test", "stock", "little-endian")]
    [InlineData("stock", "under-test", "little-endian")]
    [InlineData("under-test", "stock", "big-endian")]
    [InlineData("stock", "under-test", "big-endian")]
    [InlineData("under-test", "under-test", "big-endian")]
    public async Task Payloads_up_to_just_under_the_maximum_frame_cross_in_both_directions(string client, string server, string byteOrder)
    {
        var section = $"byte-order = {byteOrder}";
        await using var a = Nodes.Start("client", ClassOf(client), section);
        await using var b = Nodes.Start("server", ClassOf(server), section);
        b.System.ActorOf(Props.Create<Echo>(), "echo");
        var echo = await b.Resolve(a, "echo");

        var payloads = new Payloads(seed: 7, count: 64, maxSize: 128000 - EnvelopeRoom);
        for (var i = 0; i < payloads.Count; i++)
        {
            var reply = await echo.Ask<byte[]>(payloads.Create(i), AskTimeout);
            Assert.True(reply.AsSpan().SequenceEqual(payloads.Expected(i)), $"message {i} of {reply.Length} bytes came back changed");
        }
    }

    [Theory]
    [SuiteData(nameof(ExtremeSettings))]
    public async Task A_hundred_thousand_messages_arrive_all_in_order_and_byte_identical(string setting)
    {
        await using var a = Nodes.Start("sender", TransportClass, setting);
        await using var b = Nodes.Start("receiver", TransportClass, setting);

        await SendInOrder(a, b, new Payloads(seed: 20261122, count: 100_000, maxSize: 128000 - EnvelopeRoom), setting);
    }

    [Fact]
    public async Task A_request_response_loop_never_waits_for_the_flush_interval()
    {
        // With nothing but the interval to end a batch, each round trip would wait an hour: the burst-end flush must
        // send each request and each reply at once.
        const string section = "batching { max-pending-writes = 65536, max-pending-bytes = 64m, flush-interval = 1h }";
        await using var a = Nodes.Start("client", TransportClass, section);
        await using var b = Nodes.Start("server", TransportClass, section);
        b.System.ActorOf(Props.Create<Echo>(), "echo");
        var echo = await b.Resolve(a, "echo");

        for (var i = 0; i < 500; i++)
        {
            Assert.Equal(i, await echo.Ask<int>(i, AskTimeout));
        }
    }

    // Sends every payload from a to a SequenceReceiver on b, a window at a time, and waits until all arrived in order
    // and byte-identical (the receiver checks each against the same sequence).
    private static async Task SendInOrder(Node a, Node b, Payloads payloads, string what)
    {
        var permits = new SemaphoreSlim(8);
        var done = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        b.System.ActorOf(Props.Create(() => new SequenceReceiver(payloads, permits, done)), "receiver");
        var receiver = await b.Resolve(a, "receiver");

        for (var i = 0; i < payloads.Count; i++)
        {
            if (i % SequenceReceiver.Window == 0 && !await permits.WaitAsync(TimeSpan.FromSeconds(60)))
            {
                throw new TimeoutException($"The receiver stalled before message {i} (seed {payloads.Seed}, {what}).");
            }

            receiver.Tell(payloads.Create(i));
        }

        Assert.Equal(payloads.Count, await Poll.Within(done.Task, patience: TimeSpan.FromSeconds(120)));
    }
}
