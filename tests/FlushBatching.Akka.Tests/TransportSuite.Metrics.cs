using FlushBatching.Akka.Tests.Support;
using FlushBatching.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>What a node's metrics say of its transport, for an operator whose logs show nothing below WARNING.</summary>
public abstract partial class TransportSuite
{
    /// <summary>The tags, beside the address, that <c>flushbatching.transport.listening</c> carries for this suite's nodes.</summary>
    protected abstract string ListeningTags { get; }

    [Fact]
    public async Task While_it_listens_a_node_at_warning_level_shows_its_transport_and_stack_in_its_metrics_and_not_after()
    {
        using var recorder = MeterRecorder.ForEveryInstance();
        var node = Nodes.Start("listening", TransportClass, hocon: "akka.loglevel = WARNING");
        var address = node.Address.ToString();
        List<(long Value, Dictionary<string, object?> Tags)> Read() =>
            recorder.ObserveSeries(TransportInstruments.ListeningInstrument)
                .Where(series => series.Tags.GetValueOrDefault(TransportInstruments.AddressTag) as string == address).ToList();

        try
        {
            Assert.DoesNotContain(node.Logs, e => e.ToString()!.Contains("FlushBatching transport listening on"));
            var (value, tags) = Assert.Single(Read());
            Assert.Equal(1, value);
            Assert.Equal(ListeningTags, string.Join(" ", tags.Where(tag => tag.Key != TransportInstruments.AddressTag).OrderBy(tag => tag.Key).Select(tag => $"{tag.Key}={tag.Value}")));
        }
        finally
        {
            await node.DisposeAsync();
        }

        Assert.Empty(Read());
    }
}
