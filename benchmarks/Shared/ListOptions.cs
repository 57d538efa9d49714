using System.CommandLine;
using System.CommandLine.Parsing;

namespace FlushBatching.Benchmarks.Shared;

/// <summary>Options that take comma-separated lists, such as <c>--clients 1,5,10</c>, shared by the benchmark programs.</summary>
internal static class ListOptions
{
    /// <summary>A list of whole numbers from <paramref name="minimum"/> up.</summary>
    public static Option<int[]> Numbers(string name, string description, int[] defaults, int minimum = 1) => new(name)
    {
        Description = description,
        DefaultValueFactory = _ => defaults,
        CustomParser = result =>
        {
            var numbers = new List<int>();
            foreach (var text in Items(result))
            {
                if (int.TryParse(text, out var number) && number >= minimum)
                {
                    numbers.Add(number);
                }
                else
                {
                    result.AddError($"{name} takes whole numbers from {minimum} up, not '{text}'.");
                }
            }

            return [.. numbers];
        },
        AllowMultipleArgumentsPerToken = true,
    };

    /// <summary>A list of words, each one of <paramref name="allowed"/>.</summary>
    public static Option<string[]> Words(string name, string description, string[] allowed, string[] defaults) => new(name)
    {
        Description = $"{description} Any of: {string.Join(", ", allowed)}.",
        DefaultValueFactory = _ => defaults,
        CustomParser = result =>
        {
            var words = Items(result).ToArray();
            foreach (var word in words.Where(w => !allowed.Contains(w)))
            {
                result.AddError($"{name} takes {string.Join(", ", allowed)}, not '{word}'.");
            }

            return words;
        },
        AllowMultipleArgumentsPerToken = true,
    };

    /// <summary>A list of HOCON values (sizes, durations), checked by the caller.</summary>
    public static Option<string[]> Values(string name, string description) => new(name)
    {
        Description = description,
        DefaultValueFactory = _ => [],
        CustomParser = result => Items(result).ToArray(),
        AllowMultipleArgumentsPerToken = true,
    };

    private static IEnumerable<string> Items(ArgumentResult result) =>
        result.Tokens.SelectMany(t => t.Value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries));
}
