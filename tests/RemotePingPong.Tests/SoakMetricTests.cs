using RemotePingPong.Soak;

namespace RemotePingPong.Tests;

/// <summary>
/// The verdict a soak gives one quantity: the median of its last third of samples against the median of its first,
/// with an allowance. A soak that passes a leak, or fails a level run, makes its reliability table worthless.
/// </summary>
public sealed class SoakMetricTests
{
    private static readonly double[] Minutes = [2, 3, 4, 5, 6, 7, 8, 9, 10];

    [Fact]
    public void A_level_quantity_passes_with_a_slope_of_zero()
    {
        var metric = SoakMetric.Judge("threads", Minutes, [40, 40, 40, 40, 40, 40, 40, 40, 40], 0.10, 4);

        Assert.False(metric.Failed);
        Assert.Equal(40, metric.First);
        Assert.Equal(40, metric.Last);
        Assert.Equal(0, metric.SlopePerHour);
        Assert.Equal(8, metric.Allowed); // 10% of 40, plus 4
    }

    [Fact]
    public void A_quantity_that_grows_past_its_allowance_fails_and_one_that_grows_to_it_passes()
    {
        // First third's median 100, allowance 100 * 0.10 + 16 = 26.
        Assert.True(SoakMetric.Judge("working set", Minutes, [100, 100, 100, 110, 115, 120, 127, 127, 127], 0.10, 16).Failed);
        Assert.False(SoakMetric.Judge("working set", Minutes, [100, 100, 100, 110, 115, 120, 126, 126, 126], 0.10, 16).Failed);
    }

    [Fact]
    public void One_outlying_sample_at_either_end_decides_nothing()
    {
        // A collection just before the first sample, a busy minute of a shared machine at the last: the first and last
        // samples alone would call this a leak of 490.
        var metric = SoakMetric.Judge("live heap", Minutes, [10, 100, 100, 100, 100, 100, 100, 100, 500], 0.10, 4);

        Assert.False(metric.Failed);
        Assert.Equal(100, metric.First);
        Assert.Equal(100, metric.Last);
    }

    [Fact]
    public void A_rate_fails_when_it_falls_past_its_allowance_and_never_for_rising()
    {
        Assert.True(SoakMetric.Judge("round trips/sec", Minutes, [2000, 2000, 2000, 1800, 1700, 1600, 1400, 1400, 1400], 0.25, 0, higherIsWorse: false).Failed);
        Assert.False(SoakMetric.Judge("round trips/sec", Minutes, [2000, 2000, 2000, 1800, 1700, 1600, 1500, 1500, 1500], 0.25, 0, higherIsWorse: false).Failed);
        Assert.False(SoakMetric.Judge("round trips/sec", Minutes, [2000, 2000, 2000, 3000, 4000, 5000, 9000, 9000, 9000], 0.25, 0, higherIsWorse: false).Failed);
    }

    [Fact]
    public void The_slope_is_by_least_squares_and_per_hour()
    {
        // One more each minute: 60 an hour, whatever the intercept.
        var metric = SoakMetric.Judge("descriptors", Minutes, [.. Minutes.Select(minute => 7 + minute)], 0, 8);

        Assert.Equal(60, metric.SlopePerHour, 9);
    }
}
