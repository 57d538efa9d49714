using Akka.Configuration;
using FlushBatching.Akka;

namespace RemotePingPong;

/// <summary>The transport section the command line's <c>--set</c> values make, checked as a node would check it, and the sweep's grid.</summary>
internal static class TransportSection
{
    public static string Section(IEnumerable<string> assignments)
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
        FlushBatchingTransport.Validate(ConfigurationFactory.ParseString(section)); // a bad value fails here, naming the key
        return section;
    }

    public static List<(string Writes, string Bytes, string Interval)> Grid(string[] writes, string[] bytes, string[] intervals)
    {
        var grid = (from w in writes from b in bytes from i in intervals select (w, b, i)).ToList();

        // Check every value before running anything: a typo fails at once, naming the key.
        foreach (var (w, b, i) in grid)
        {
            Section([$"batching.max-pending-writes={w}", $"batching.max-pending-bytes={b}", $"batching.flush-interval={i}"]);
        }

        return grid;
    }
}
