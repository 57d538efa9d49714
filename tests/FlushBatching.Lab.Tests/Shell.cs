using System.Diagnostics;

namespace FlushBatching.Lab.Tests;

/// <summary>Runs the commands the lab needs (ip, tc) and sends signals.</summary>
public static class Shell
{
    public const int SigKill = 9;
    public const int SigTerm = 15;
    public const int SigStop = 19;
    public const int SigCont = 18;

    /// <summary>Runs <paramref name="file"/>; throws with its output when it fails, unless <paramref name="check"/> is off.</summary>
    public static (int ExitCode, string Output) Run(string file, string arguments, bool check = true)
    {
        using var process = Process.Start(new ProcessStartInfo(file, arguments)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        })!;
        var output = process.StandardOutput.ReadToEndAsync();
        var error = process.StandardError.ReadToEndAsync();
        if (!process.WaitForExit(30_000))
        {
            process.Kill();
            throw new TimeoutException($"{file} {arguments} did not finish within 30 s.");
        }

        var text = output.Result + error.Result;
        if (check && process.ExitCode != 0)
        {
            throw new InvalidOperationException($"'{file} {arguments}' failed ({process.ExitCode}): {text.Trim()}");
        }

        return (process.ExitCode, text);
    }

    public static void Signal(int pid, int signal) => Run("kill", $"-{signal} {pid}");
}
