using System.Diagnostics.Metrics;
using FlushBatching.Akka.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>What a node's metrics say of its transport, for an operator whose logs show nothing below WARNING.</summary>
public abstract partial class TransportSuite
{
    /// <summary>The tags, beside the address, that <c>flushbatching.transport.listening</c> carries for this suite's nodes.</summary>
    protected abstract string ListeningTags { get; }

    [Fact]
    public async Task While_it_listens_a_node_at_warning_level_shows_its_transport_and_stack_in_its_metrics_and_not_after()
    {
        var seen = new List<(int Value, Dictionary<string, string> Tags)>();
        using var listener = new MeterListener
        {
            InstrumentPublished = (instrument, l) =>
            {
                if (instrument.Name == FlushBatchingTransport.ListeningInstrument)
                {
                    l.EnableMeasurementEvents(instrument);
                }
            },
        };
        listener.SetMeasurementEventCallback<int>((_, value, tags, _) =>
            seen.Add((value, tags.ToArray().ToDictionary(tag => tag.Key, tag => tag.Value?.ToString() ?? ""))));
        listener.Start();

        var node = Nodes.Start("listening", TransportClass, hocon: "akka.loglevel = WARNING");
        var address = node.Address.ToString();
        List<(int Value, Dictionary<string, string> Tags)> Read()
        {
            seen.Clear();
            listener.RecordObservableInstruments();
            return seen.Where(m => m.Tags.GetValueOrDefault(FlushBatchingTransport.AddressTag) == address).ToList();
        }

        try
        {
            Assert.DoesNotContain(node.Logs, e => e.ToString()!.Contains("FlushBatching transport listening on"));
            var (value, tags) = Assert.Single(Read());
            Assert.Equal(1, value);
            Assert.Equal(ListeningTags, string.Join(" ", tags.Where(tag => tag.Key != FlushBatchingTransport.AddressTag).OrderBy(tag => tag.Key).Select(tag => $"{tag.Key}={tag.Value}")));
        }
        finally
        {
            await node.DisposeAsync();
        }

        Assert.Empty(Read());
    }
}
