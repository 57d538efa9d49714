namespace FlushBatching.Lab.Tests;

/// <summary>
/// One network namespace per node, each joined by a veth pair to one bridge in the root namespace, addresses
/// 10.77.subnet.(node+1)/24. Cutting a node takes its veth down on the bridge side (packets vanish, no reset);
/// throttling puts a tbf token bucket on both ends of its veth. Everything is removed on dispose, and leftovers of an
/// earlier run that died are removed before anything is made.
/// </summary>
public sealed class NamespaceNetwork : LabNetwork
{
    private const string Prefix = "fblab";

    private readonly int _nodes;
    private readonly int _subnet;

    public NamespaceNetwork(int nodes, int subnet)
    {
        _nodes = nodes;
        _subnet = subnet;
        RemoveLeftovers();
        try
        {
            Shell.Run("ip", $"link add {Bridge} type bridge");
            Shell.Run("ip", $"link set {Bridge} up");
            for (var node = 0; node < nodes; node++)
            {
                var ns = Namespace(node);
                Shell.Run("ip", $"netns add {ns}");
                Shell.Run("ip", $"link add {Veth(node)} type veth peer name eth0 netns {ns}");
                Shell.Run("ip", $"link set {Veth(node)} master {Bridge}");
                Shell.Run("ip", $"link set {Veth(node)} up");
                Shell.Run("ip", $"-n {ns} addr add {HostOf(node)}/24 dev eth0");
                Shell.Run("ip", $"-n {ns} link set eth0 up");
                Shell.Run("ip", $"-n {ns} link set lo up");
            }
        }
        catch
        {
            Dispose();
            throw;
        }
    }

    private string Bridge => $"{Prefix}{_subnet}";

    /// <summary>Whether this process may make namespaces: root, with ip and tc on the path.</summary>
    public static bool IsAvailable(out string why)
    {
        (var available, why) = Probe.Value;
        return available;
    }

    /// <summary>Why a scenario that needs links to cut or throttle is skipped here, or <c>null</c> where it runs.</summary>
    public static string? SkipReason => IsAvailable(out var why) ? null : $"needs network namespaces: {why}";

    // Probed once per process: test discovery asks for every scenario that needs real links.
    private static readonly Lazy<(bool, string)> Probe = new(() => (ProbeOnce(out var why), why));

    private static bool ProbeOnce(out string why)
    {
        if (Environment.GetEnvironmentVariable(LoopbackOnlyVariable) is "1")
        {
            why = $"{LoopbackOnlyVariable}=1";
            return false;
        }

        if (!OperatingSystem.IsLinux() || Environment.UserName != "root")
        {
            why = "not root on Linux";
            return false;
        }

        try
        {
            var probe = $"{Prefix}probe";
            Shell.Run("ip", $"netns del {probe}", check: false);
            Shell.Run("ip", $"netns add {probe}");
            Shell.Run("ip", $"netns del {probe}");
            Shell.Run("tc", "-V");
            why = "";
            return true;
        }
        catch (Exception e)
        {
            why = $"ip netns or tc does not work here ({e.Message})";
            return false;
        }
    }

    /// <summary>Set to 1, the lab runs on loopback even where namespaces work: to see what a machine without them reports.</summary>
    public const string LoopbackOnlyVariable = "FLUSHBATCHING_LAB_LOOPBACK";

    public override string HostOf(int node) => $"10.77.{_subnet}.{node + 1}";

    public override int PortOf(int node) => 2552;

    public override (string File, string Arguments) Command(int node, string arguments) => ("ip", $"netns exec {Namespace(node)} dotnet {arguments}");

    public override void Cut(int node) => Shell.Run("ip", $"link set {Veth(node)} down");

    public override void Heal(int node) => Shell.Run("ip", $"link set {Veth(node)} up");

    public override void Throttle(int node, string rate)
    {
        Shell.Run("tc", $"qdisc replace dev {Veth(node)} root tbf rate {rate} burst 32kbit latency 400ms");
        Shell.Run("ip", $"netns exec {Namespace(node)} tc qdisc replace dev eth0 root tbf rate {rate} burst 32kbit latency 400ms");
    }

    public override void Unthrottle(int node)
    {
        Shell.Run("tc", $"qdisc del dev {Veth(node)} root", check: false);
        Shell.Run("ip", $"netns exec {Namespace(node)} tc qdisc del dev eth0 root", check: false);
    }

    public override void Dispose()
    {
        for (var node = 0; node < _nodes; node++)
        {
            Shell.Run("ip", $"netns del {Namespace(node)}", check: false);
            Shell.Run("ip", $"link del {Veth(node)}", check: false);
        }

        Shell.Run("ip", $"link del {Bridge}", check: false);
    }

    private static void RemoveLeftovers()
    {
        foreach (var line in Shell.Run("ip", "netns list", check: false).Output.Split('\n'))
        {
            var name = line.Split(' ', 2)[0].Trim();
            if (name.StartsWith(Prefix, StringComparison.Ordinal))
            {
                Shell.Run("ip", $"netns del {name}", check: false);
            }
        }

        foreach (var line in Shell.Run("ip", "-o link show", check: false).Output.Split('\n'))
        {
            var parts = line.Split(':', 3);
            var name = parts.Length > 1 ? parts[1].Trim().Split('@')[0] : "";
            if (name.StartsWith(Prefix, StringComparison.Ordinal) || name.StartsWith("fbl", StringComparison.Ordinal))
            {
                Shell.Run("ip", $"link del {name}", check: false);
            }
        }
    }

    private string Namespace(int node) => $"{Prefix}{_subnet}n{node}";

    private string Veth(int node) => $"fbl{_subnet}v{node}";
}
