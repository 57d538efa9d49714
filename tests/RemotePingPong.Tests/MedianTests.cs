namespace RemotePingPong.Tests;

/// <summary>The median every table reports.</summary>
public sealed class MedianTests
{
    [Fact]
    public void An_odd_count_gives_its_middle_value_whatever_the_order() => Assert.Equal(5, Sweep.Median([9, 1, 5]));

    [Fact]
    public void An_even_count_gives_the_mean_of_its_two_middle_values() => Assert.Equal(4.5, Sweep.Median([9, 1, 4, 5]));
}
