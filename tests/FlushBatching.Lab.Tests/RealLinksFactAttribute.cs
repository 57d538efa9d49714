namespace FlushBatching.Lab.Tests;

/// <summary>
/// A scenario that needs links it can cut or throttle: reported as skipped, with the reason, where network namespaces
/// do not work (not root, no <c>ip netns</c> or <c>tc</c>), since loopback has no link to fail.
/// </summary>
public sealed class RealLinksFactAttribute : FactAttribute
{
    public RealLinksFactAttribute() => Skip = NamespaceNetwork.SkipReason;
}
