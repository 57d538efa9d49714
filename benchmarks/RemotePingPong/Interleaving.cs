
namespace RemotePingPong;

/// <summary>The order every mode measures in, so that a slow spell of a shared machine falls on every transport alike.</summary>
internal static class Interleaving
{
    // Run by run, step by step, each transport in turn within a step, so a slow spell of the machine falls on all of them
    // rather than on one; `run` measures one (run, step, transport) and returns its progress line, printed to stderr.
    public static async Task Interleaved<TStep>(int repeat, IReadOnlyList<TStep> steps, TransportUnderTest[] transports, Func<int, TStep, TransportUnderTest, Task<string>> run)
    {
        var runs = transports.Length * steps.Count * repeat;
        var done = 0;
        for (var r = 1; r <= repeat; r++)
        {
            foreach (var step in steps)
            {
                foreach (var transport in transports)
                {
                    var line = await run(r, step, transport);
                    Console.Error.WriteLine($"[{++done}/{runs}] {line}");
                }
            }
        }
    }
}
