using Akka.Configuration;
using FlushBatching.Akka;

namespace RemotePingPong;

/// <summary>The transport section the command line's <c>--set</c> values make, checked as a node would check it, and the sweep's grid.</summary>
internal static class TransportSection
{
    /// <param name="assignments">The <c>key=value</c> lines.</param>
    /// <param name="beside">Lines the node gets too (<c>--maximum-frame-size</c>), checked with these: a high-water
    /// mark is checked against the frame size the node will have, not the default.</param>
    public static string Section(IEnumerable<string> assignments, string beside = "")
    {
        var lines = new List<string>();
        foreach (var assignment in assignments)
        {
            var parts = assignment.Split('=', 2, StringSplitOptions.TrimEntries);
            if (parts.Length != 2 || parts[0].Length == 0)
            {
                throw new FormatException($"--set takes key=value, not '{assignment}'.");
            }

            lines.Add($"{parts[0]} = \"{parts[1]}\"");
        }

        var section = string.Join(Environment.NewLine, lines);
        // A bad value fails here, naming the key.
        FlushBatchingTransport.Validate(ConfigurationFactory.ParseString(section + Environment.NewLine + beside));
        return section;
    }

    public static List<(string Writes, string Bytes, string Interval)> Grid(string[] writes, string[] bytes, string[] intervals, string beside)
    {
        var grid = (from w in writes from b in bytes from i in intervals select (w, b, i)).ToList();

        // Check every value before running anything: a typo fails at once, naming the key.
        foreach (var (w, b, i) in grid)
        {
            Section([$"batching.max-pending-writes={w}", $"batching.max-pending-bytes={b}", $"batching.flush-interval={i}"], beside);
        }

        return grid;
    }
}
