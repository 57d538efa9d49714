namespace FlushBatching.Tests.Support;

/// <summary>The theory form of <see cref="LinuxFactAttribute"/>: skipped with the reason on any system but Linux.</summary>
public sealed class LinuxTheoryAttribute : TheoryAttribute
{
    /// <param name="why">What of Linux's the test needs, for the skip's reason.</param>
    public LinuxTheoryAttribute(string why)
    {
        if (!OperatingSystem.IsLinux())
        {
            Skip = $"Linux only: {why}";
        }
    }
}
