namespace FlushBatching.Tests.Support;

/// <summary>
/// A test of something only Linux has (process limits through libc, /proc, a store layout of Linux's): reported as
/// skipped, with the reason, on any other system, never counted as passed.
/// </summary>
public sealed class LinuxFactAttribute : FactAttribute
{
    /// <param name="why">What of Linux's the test needs, for the skip's reason.</param>
    public LinuxFactAttribute(string why)
    {
        if (!OperatingSystem.IsLinux())
        {
            Skip = $"Linux only: {why}";
        }
    }
}
