namespace FlushBatching.Lab.Tests;

/// <summary>The theory form of <see cref="RealLinksFactAttribute"/>: every row is skipped, with the reason, without namespaces.</summary>
public sealed class RealLinksTheoryAttribute : TheoryAttribute
{
    public RealLinksTheoryAttribute() => Skip = NamespaceNetwork.SkipReason;
}
