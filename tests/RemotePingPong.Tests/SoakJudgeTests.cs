using RemotePingPong.Soak;

namespace RemotePingPong.Tests;

/// <summary>What a soak judges: the samples after its warm-up, and only a run long enough to have three of them.</summary>
public sealed class SoakJudgeTests
{
    [Fact]
    public void Samples_taken_during_the_warm_up_are_left_out()
    {
        // The pool and the JIT fill during the first minutes: a climb there is not a leak.
        (double Minute, double Mb)[] samples = [(0, 10), (0.5, 40), (1, 100), (1.5, 100), (2, 100), (2.5, 100)];
        var judge = new SoakJudge<(double Minute, double Mb)>(samples, s => s.Minute, TimeSpan.FromMinutes(1));

        var metric = judge.Judge("working set", s => s.Mb, 0.10, 0);

        Assert.False(metric.Failed);
        Assert.Equal(100, metric.First);
    }

    [Fact]
    public void A_run_with_fewer_than_three_samples_after_its_warm_up_is_refused_as_too_short()
    {
        (double Minute, double Mb)[] samples = [(0, 10), (0.5, 10), (1, 10), (1.5, 10)];

        var error = Assert.Throws<TimeoutException>(() => new SoakJudge<(double Minute, double Mb)>(samples, s => s.Minute, TimeSpan.FromMinutes(1)));
        Assert.Contains("it took 2", error.Message);
    }
}
