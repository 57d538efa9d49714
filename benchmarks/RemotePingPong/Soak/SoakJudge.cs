namespace RemotePingPong.Soak;

/// <summary>
/// Judges a soak's quantities over its samples after the warm-up, one <see cref="SoakMetric"/> each: the soak's
/// (<see cref="SoakReport"/>) and the peers soak's (<c>PeersSoakReport</c>) samples alike.
/// </summary>
internal sealed class SoakJudge<TSample>
{
    private readonly List<TSample> _judged;
    private readonly List<double> _minutes;

    /// <exception cref="TimeoutException">Fewer than three samples after the warm-up: the run was too short to judge.</exception>
    public SoakJudge(IEnumerable<TSample> samples, Func<TSample, double> minute, TimeSpan warmUp)
    {
        _judged = [.. samples.Where(s => minute(s) >= warmUp.TotalMinutes)];
        if (_judged.Count < 3)
        {
            throw new TimeoutException($"a soak needs three samples after the {warmUp.TotalMinutes:N1}-minute warm-up; it took {_judged.Count}: run it longer.");
        }

        _minutes = [.. _judged.Select(minute)];
    }

    public SoakMetric Judge(string name, Func<TSample, double> value, double relativeTolerance, double absoluteTolerance, bool higherIsWorse = true) =>
        SoakMetric.Judge(name, _minutes, [.. _judged.Select(value)], relativeTolerance, absoluteTolerance, higherIsWorse);
}
