namespace FlushBatching.Tests.Support;

/// <summary>Files of this repository that a test needs beside its own binaries: pages it checks, programs it starts.</summary>
public static class Repository
{
#if DEBUG
    private const string Configuration = "Debug";
#else
    private const string Configuration = "Release";
#endif

    /// <summary>The repository's root: the folder above the test's binaries that holds FlushBatching.sln.</summary>
    public static string Root
    {
        get
        {
            var directory = new DirectoryInfo(AppContext.BaseDirectory);
            while (directory is not null && !File.Exists(Path.Combine(directory.FullName, "FlushBatching.sln")))
            {
                directory = directory.Parent;
            }

            return directory?.FullName ?? throw new DirectoryNotFoundException($"No FlushBatching.sln above {AppContext.BaseDirectory}.");
        }
    }

    /// <summary>The built program lab/NAME (lab/ClusterNode, lab/FloodNode), in the configuration the tests were built in.</summary>
    public static string LabProgram(string name)
    {
        var dll = Path.Combine(Root, "lab", name, "bin", Configuration, "net10.0", name + ".dll");
        return File.Exists(dll) ? dll : throw new FileNotFoundException($"Build lab/{name} first: {dll} is missing.");
    }
}
