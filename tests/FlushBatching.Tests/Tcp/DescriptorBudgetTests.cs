using FlushBatching.Tcp;
using FlushBatching.Tcp.Admission;

namespace FlushBatching.Tests.Tcp;

public sealed class DescriptorBudgetTests
{
    private const long GiB = 1024L * 1024 * 1024;

    [Fact]
    public void Under_a_low_descriptor_limit_the_descriptors_left_after_the_reserve_are_the_bound()
    {
        var (bound, how) = DescriptorBudget.Derive(limit: 1024, open: 100, availableMemory: 8 * GiB);

        Assert.Equal(1024 - 100 - 102, bound);
        Assert.Contains("descriptor limit of 1024", how);
        Assert.DoesNotContain("capped", how);
    }

    [Fact]
    public void Under_a_containers_limit_of_a_million_descriptors_memory_caps_the_bound_and_says_so()
    {
        var (bound, how) = DescriptorBudget.Derive(limit: 1_048_576, open: 200, availableMemory: 4 * GiB);

        Assert.Equal(4 * GiB / 2 / DescriptorBudget.BytesPerConnection, bound);
        Assert.Contains("which allows 943519", how);
        Assert.Contains("capped at half of the 4096 MiB", how);
    }

    [Fact]
    public void A_bound_is_never_below_one()
    {
        Assert.Equal(1, DescriptorBudget.Derive(limit: 100, open: 90, availableMemory: 8 * GiB).Bound);
        Assert.Equal(1, DescriptorBudget.Derive(limit: 1_048_576, open: 10, availableMemory: 1024).Bound);
    }
}
