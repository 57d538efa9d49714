using System.Diagnostics;
using System.Text;
using Akka.Actor;
using FlushBatching.Tests.Support;

namespace FlushBatching.Akka.Tests.Support;

/// <summary>
/// A lab/FloodNode process: one Akka.Remote node with an echo actor, on the transport named, under a descriptor limit
/// of its own (<c>ulimit -n</c>), its thread pool left as the runtime runs it. Ended when disposed.
/// </summary>
public sealed class FloodNode : IDisposable
{
    private readonly Process _process;
    private readonly StringBuilder _errors = new();
    private readonly StringBuilder _log = new();

    private FloodNode(Process process, IReadOnlyList<Address> addresses)
    {
        _process = process;
        Addresses = addresses;

        // Read to the end, so that a node that logs much never blocks on a full pipe, and kept for a failure's message.
        _ = Task.Run(async () =>
        {
            while (await process.StandardOutput.ReadLineAsync() is { } line)
            {
                lock (_log)
                {
                    _log.AppendLine(line);
                }
            }
        });
        process.ErrorDataReceived += (_, line) =>
        {
            lock (_errors)
            {
                _errors.AppendLine(line.Data);
            }
        };
        process.BeginErrorReadLine();
    }

    /// <summary>The node's Akka address: its first system's.</summary>
    public Address Address => Addresses[0];

    /// <summary>The Akka address of each system the process runs.</summary>
    public IReadOnlyList<Address> Addresses { get; }

    /// <summary>The port it listens on.</summary>
    public int Port => Address.Port!.Value;

    public bool HasExited => _process.HasExited;

    /// <summary>What the node wrote to its standard error (the runtime's last words, if it died).</summary>
    public string Errors
    {
        get
        {
            lock (_errors)
            {
                return $"exit {(_process.HasExited ? _process.ExitCode : "none")}; {_errors}";
            }
        }
    }

    /// <summary>What the node logged (its WARNINGs and ERRORs) since it started serving.</summary>
    public string Log
    {
        get
        {
            lock (_log)
            {
                return _log.ToString();
            }
        }
    }

    /// <summary>Starts the node and waits until it serves.</summary>
    /// <param name="transport">flushbatching, flushbatching-dotnetty, flushbatching-dotnetty-dedicated or stock.</param>
    /// <param name="descriptorLimit">Its <c>ulimit -n</c>.</param>
    /// <param name="sectionLines">Lines for its transport section.</param>
    public static FloodNode Start(string transport, int descriptorLimit, params string[] sectionLines) =>
        Start(transport, descriptorLimit, systems: 1, sectionLines);

    /// <inheritdoc cref="Start(string, int, string[])"/>
    /// <param name="systems">How many ActorSystems the one process runs, each with an echo.</param>
    public static FloodNode Start(string transport, int descriptorLimit, int systems, params string[] sectionLines)
    {
        var start = new ProcessStartInfo("bash", ["-c", $"ulimit -n {descriptorLimit} && exec dotnet \"$0\" \"$@\"", Dll, transport, .. sectionLines])
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            Environment = { ["FLOODNODE_SYSTEMS"] = systems.ToString(System.Globalization.CultureInfo.InvariantCulture) },
        };
        var process = Process.Start(start)!;
        var addresses = new List<Address>();
        while (addresses.Count < systems)
        {
            var line = process.StandardOutput.ReadLineAsync().WaitAsync(TimeSpan.FromSeconds(60)).GetAwaiter().GetResult();
            if (line is null || !line.StartsWith("LISTENING ", StringComparison.Ordinal))
            {
                process.Kill();
                throw new InvalidOperationException($"FloodNode did not start: '{line}' {process.StandardError.ReadToEnd()}");
            }

            addresses.Add(Address.Parse(line["LISTENING ".Length..]));
        }

        return new FloodNode(process, addresses);
    }

    /// <summary>The descriptors the node's process has open now (0 once it has exited).</summary>
    public int OpenDescriptors()
    {
        try
        {
            return Directory.GetFileSystemEntries($"/proc/{_process.Id}/fd").Length;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return 0;
        }
    }

    public void Dispose()
    {
        if (!_process.HasExited)
        {
            _process.StandardInput.Close();
            if (!_process.WaitForExit(TimeSpan.FromSeconds(15)))
            {
                _process.Kill();
            }
        }

        _process.Dispose();
    }

    private static string Dll => Repository.LabProgram("FloodNode");
}
