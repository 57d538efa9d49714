
namespace RemotePingPong;

/// <summary>How the mode tables sum up runs: medians, spread, queue delays and flush reasons.</summary>
internal static class Summary
{
    // Standard deviation over mean: how far single runs stray; 0 with one run.
    public static double Cv(IEnumerable<double> values)
    {
        var all = values.ToArray();
        if (all.Length < 2)
        {
            return 0;
        }

        var mean = all.Average();
        return Math.Sqrt(all.Sum(v => (v - mean) * (v - mean)) / (all.Length - 1)) / mean;
    }

    public static double Median(IEnumerable<double> values) => Sweep.Median(values);

    // Medians over the runs of each run's p50 and p99; nothing for stock, which records no queue delay.
    public static string QueueDelay(IEnumerable<double?> p50s, IEnumerable<double?> p99s)
    {
        var p50 = p50s.OfType<double>().ToList();
        var p99 = p99s.OfType<double>().ToList();
        return p50.Count == 0 ? "" : $", {Median(p50):N0}/{Median(p99):N0}";
    }

    // Flush reasons summed over a row's runs, in shares: what ended the batches.
    public static string Reasons(List<RowResult> rows)
    {
        var totals = rows.SelectMany(row => row.FlushesByReason ?? []).GroupBy(f => f.Key).ToDictionary(g => g.Key, g => g.Sum(f => f.Value));
        var all = totals.Values.Sum();
        return all == 0 ? "" : ", " + string.Join(" ", totals.OrderByDescending(t => t.Value).Select(t => $"{t.Key} {100.0 * t.Value / all:N0}%"));
    }

    /// <summary>
    /// A mode's table after a blank line: its caption, its header, and a line per transport and step, each the
    /// transport's name, the step, and what <paramref name="cells"/> makes of that pair's rows.
    /// </summary>
    public static void PrintTable<TStep, TRow>(
        string caption, string header, TransportUnderTest[] transports, IReadOnlyList<TStep> steps,
        Func<string, TStep, List<TRow>> rowsOf, Func<TStep, List<TRow>, string> cells)
    {
        Console.WriteLine();
        Console.WriteLine(caption);
        Console.WriteLine(header);
        foreach (var transport in transports)
        {
            foreach (var step in steps)
            {
                Console.WriteLine($"{transport.Name}, {step}, {cells(step, rowsOf(transport.Name, step))}");
            }
        }
    }
}
