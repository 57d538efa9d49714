using FlushBatching.Fuzz;

namespace FlushBatching.Tests.Framing;

/// <summary>
/// Every input the fuzzer kept (tools/fuzz.sh), and every crash it ever found, run again through its target: each must
/// be handled or refused as bad input, never break a target's checks or throw anything else.
/// </summary>
public sealed class FuzzCorpusTests
{
    public static TheoryData<string> Targets() => new(FuzzTargets.All.Keys);

    [Theory]
    [MemberData(nameof(Targets))]
    public void Every_kept_input_is_handled_or_refused_as_bad_input(string target)
    {
        var folder = Path.Combine(AppContext.BaseDirectory, "corpus", target);
        var inputs = Directory.Exists(folder) ? Directory.GetFiles(folder) : [];
        Assert.NotEmpty(inputs);
        var failures = new List<string>();
        foreach (var input in inputs)
        {
            var bytes = File.ReadAllBytes(input);
            if (Record.Exception(() => FuzzTargets.All[target](bytes)) is { } thrown)
            {
                failures.Add($"{Path.GetFileName(input)} ({Convert.ToHexString(bytes[..Math.Min(bytes.Length, 32)])}): {thrown}");
            }
        }

        Assert.True(failures.Count == 0, $"{failures.Count} of {inputs.Length} inputs failed:\n{string.Join("\n\n", failures)}");
    }
}
