namespace FlushBatching.Tests.Support;

/// <summary>
/// The guard of every test that adds a certificate to a current-user store: it runs only where that store is a
/// folder of the test run's own (tools/isolated.sh gives the test process a HOME of its own, and .NET keeps the
/// current user's stores under HOME on Linux). A test killed mid-run then leaves its CA in that folder, which the
/// script removes, never trusted by the user's other programs. Such tests are <see cref="LinuxFactAttribute"/>s:
/// no other system lets a test move its store.
/// </summary>
public static class IsolatedStore
{
    public const string Reason = "adds a certificate to the current user's store, which a test isolates by a HOME of its own on Linux alone";

    private const string Variable = "FLUSHBATCHING_TEST_HOME";
    private const string Marker = ".flushbatching-test-home";

    /// <summary>Throws unless HOME is the isolated folder that tools/isolated.sh made for this run.</summary>
    public static void Require()
    {
        var home = Environment.GetEnvironmentVariable("HOME");
        var isolated = Environment.GetEnvironmentVariable(Variable);
        if (!OperatingSystem.IsLinux() || string.IsNullOrEmpty(home) || home != isolated || !File.Exists(Path.Combine(home, Marker)))
        {
            throw new InvalidOperationException(
                "This test adds a certificate to the current user's store and refuses to touch the real one: run it " +
                "under tools/isolated.sh (./build.sh test does), which gives the test process a HOME of its own.");
        }
    }
}
