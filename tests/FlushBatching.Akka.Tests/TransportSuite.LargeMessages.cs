using Akka.Actor;
using Akka.Event;
using FlushBatching.Akka.Tests.Support;
using FlushBatching.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>Messages of megabytes, with <c>maximum-frame-size</c> raised as a user would, and one past it.</summary>
public abstract partial class TransportSuite
{
    private const string FourMegabyteFrames = "maximum-frame-size = 4000000b";

    [Theory]
    [MemberData(nameof(Peers))]
    public async Task Messages_of_up_to_three_megabytes_cross_both_ways_byte_identical_with_the_frame_size_raised(string client, string server)
    {
        await using var a = Nodes.Start("client", ClassOf(client), FourMegabyteFrames);
        await using var b = Nodes.Start("server", ClassOf(server), FourMegabyteFrames);
        b.System.ActorOf(Props.Create<Echo>(), "echo");
        var echo = await b.Resolve(a, "echo");

        foreach (var size in new[] { 16 * 1024, 256 * 1024, 1024 * 1024, 3 * 1024 * 1024 })
        {
            var payload = new byte[size];
            new Random(size).NextBytes(payload);
            var reply = await echo.Ask<byte[]>(payload, AskTimeout);
            Assert.True(reply.AsSpan().SequenceEqual(payload), $"the {size}-byte message came back changed");
        }
    }

    [Fact]
    public async Task Ten_megabyte_messages_in_flight_are_all_taken_at_once_with_only_the_frame_size_raised()
    {
        // A refused write waits out Akka.Remote's backoff-interval (50 ms) before it is tried again; the high-water
        // mark follows maximum-frame-size, so none is refused here. Tests run one at a time: every Meter is ours.
        using var recorder = MeterRecorder.ForEveryInstance();
        await using var a = Nodes.Start("client", TransportClass, "maximum-frame-size = 2MB");
        await using var b = Nodes.Start("server", TransportClass, "maximum-frame-size = 2MB");
        b.System.ActorOf(Props.Create<Echo>(), "echo");
        var echo = await b.Resolve(a, "echo");

        var replies = await Task.WhenAll(Enumerable.Range(0, 10).Select(_ => echo.Ask<byte[]>(new byte[1_000_000], AskTimeout)));

        Assert.All(replies, reply => Assert.Equal(1_000_000, reply.Length));
        Assert.Equal(0, recorder.Sum("flushbatching.writes.refused"));
    }

    [Fact]
    public async Task A_message_past_the_maximum_frame_size_is_dropped_with_one_log_line_and_the_association_stays_live()
    {
        await using var a = Nodes.Start("sender", TransportClass);
        await using var b = Nodes.Start("receiver", TransportClass);
        b.System.ActorOf(Props.Create<Echo>(), "echo");
        var echo = await b.Resolve(a, "echo");
        Assert.Equal("before", await echo.Ask<string>("before", AskTimeout));

        // Akka.Remote refuses it at the sender against the transport's MaximumPayloadBytes: the frame never leaves.
        echo.Tell(new byte[200_000]);
        Assert.Equal("after", await echo.Ask<string>("after", AskTimeout));

        static bool Oversized(LogEvent e) => e.ToString().Contains("oversized payload", StringComparison.OrdinalIgnoreCase);
        await Poll.Until(() => a.Logs.Any(Oversized), "the sender's line about the oversized message");
        Assert.Single(a.Logs, Oversized);
        Assert.Equal(LogLevel.ErrorLevel, a.Logs.Single(Oversized).LogLevel());
        Assert.DoesNotContain(a.Logs.Concat(b.Logs), e => e.ToString().Contains("Disassociated", StringComparison.OrdinalIgnoreCase) || e is Error && !Oversized(e));
    }
}
