using FlushBatching.Fuzz;
using SharpFuzz;

// Run by tools/fuzz.sh under afl-fuzz: one target by name, its input on standard input, out of process.
if (args.Length != 1 || !FuzzTargets.All.TryGetValue(args[0], out var target))
{
    Console.Error.WriteLine($"usage: FlushBatching.Fuzz <target>; targets: {string.Join(", ", FuzzTargets.All.Keys)}");
    return 2;
}

Fuzzer.OutOfProcess.Run(stream =>
{
    using var copy = new MemoryStream();
    stream.CopyTo(copy);
    target(copy.ToArray());
});
return 0;
