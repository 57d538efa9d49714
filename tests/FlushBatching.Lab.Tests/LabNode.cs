using System.Collections.Concurrent;
using System.Diagnostics;
using System.Text.Json;
using FlushBatching.Tests.Support;

namespace FlushBatching.Lab.Tests;

/// <summary>One ClusterNode process: started in its place on the lab network, its report lines collected as they come.</summary>
public sealed class LabNode : IDisposable
{
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web);

    private readonly ConcurrentQueue<string> _errors = new();
    private Process _process;
    private volatile NodeReport? _latest;

    public LabNode(LabNetwork network, int index, string name, string transport, string seed, string extraArguments)
    {
        Network = network;
        Index = index;
        Name = name;
        Transport = transport;
        Address = AddressOf(network, index, extraArguments);
        Arguments = $"\"{ClusterNodeDll}\" --name {name} --transport {transport} --hostname {network.HostOf(index)} --port {network.PortOf(index)} --seed {seed} {extraArguments}";
        _process = Start();
    }

    public LabNetwork Network { get; }

    /// <summary>The Akka address node <paramref name="index"/> has on <paramref name="network"/>, TLS or not by its arguments.</summary>
    public static string AddressOf(LabNetwork network, int index, string arguments) =>
        $"akka.{(arguments.Contains("--tls-pfx") ? "ssl." : "")}tcp://lab@{network.HostOf(index)}:{network.PortOf(index)}";

    public int Index { get; }

    public string Name { get; }

    public string Transport { get; }

    /// <summary>The node's Akka address, as its peers name it.</summary>
    public string Address { get; }

    public string Arguments { get; }

    /// <summary>The newest report line, or <c>null</c> before the first.</summary>
    public NodeReport? Latest => _latest;

    /// <summary>Every report line so far, oldest first.</summary>
    public ConcurrentQueue<NodeReport> History { get; } = new();

    public bool HasExited => _process.HasExited;

    /// <summary>Whether the lab killed this node on purpose and has not restarted it.</summary>
    public bool Crashed { get; private set; }

    public int ExitCode => _process.ExitCode;

    /// <summary>
    /// The last lines the node wrote to standard error (Akka's warnings and errors), and any report of its that could not
    /// be read, for a failure message.
    /// </summary>
    public string RecentErrors => string.Join(Environment.NewLine, _errors.TakeLast(15));

    private static string ClusterNodeDll => Repository.LabProgram("ClusterNode");

    public void Freeze() => Shell.Signal(_process.Id, Shell.SigStop);

    public void Thaw() => Shell.Signal(_process.Id, Shell.SigCont);

    /// <summary>Kills the process at once (SIGKILL): no goodbye to the cluster.</summary>
    public void Crash()
    {
        Crashed = true;
        Shell.Signal(_process.Id, Shell.SigKill);
        _process.WaitForExit(10_000);
    }

    /// <summary>Starts the node again, same address and arguments, as a new incarnation.</summary>
    public void Restart()
    {
        _process.Dispose();
        _latest = null;
        _process = Start();
        Crashed = false;
    }

    public void Dispose()
    {
        try
        {
            if (!_process.HasExited)
            {
                Shell.Signal(_process.Id, Shell.SigCont);
                _process.Kill(entireProcessTree: true);
                _process.WaitForExit(10_000);
            }
        }
        catch (InvalidOperationException)
        {
        }

        _process.Dispose();
    }

    private Process Start()
    {
        var (file, arguments) = Network.Command(Index, Arguments);
        var process = new Process
        {
            StartInfo = new ProcessStartInfo(file, arguments)
            {
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                UseShellExecute = false,
            },
        };
        process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is { } line && line.StartsWith("LAB ", StringComparison.Ordinal))
            {
                // A node killed as it writes a report leaves its last line cut short, and the reader hands it on as a
                // line at the end of the output. Thrown here, on the reader's thread, it ended the test host (a CI
                // rehearsal, in the steady TLS scenario): kept with the node's errors instead, as Describe shows them.
                NodeReport report;
                try
                {
                    report = JsonSerializer.Deserialize<NodeReport>(line.AsSpan(4), Json)!;
                }
                catch (JsonException unreadable)
                {
                    _errors.Enqueue($"{Name}: an unreadable report ({unreadable.Message}): {line}");
                    return;
                }

                History.Enqueue(report);
                _latest = report;
            }
        };
        process.ErrorDataReceived += (_, e) =>
        {
            if (e.Data is { } line)
            {
                _errors.Enqueue($"{Name}: {line}");
            }
        };
        process.Start();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return process;
    }
}
