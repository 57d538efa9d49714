namespace RemotePingPong.Soak;

/// <summary>
/// One quantity a soak watches, and the verdict on it: the median of the last third of the samples against the median
/// of the first third (warm-up left out), allowed to grow by <see cref="RelativeTolerance"/> of the first plus
/// <see cref="AbsoluteTolerance"/>. Medians of thirds, not the first and last sample, so a collection that happens to
/// fall just before one sample, or a busy minute of a shared machine, decides nothing; the least-squares slope is
/// reported beside them.
/// </summary>
public sealed record SoakMetric(string Name, double First, double Last, double SlopePerHour, double Allowed, bool HigherIsWorse)
{
    /// <summary>Whether it moved the wrong way by more than allowed: grew (or, for a rate, fell).</summary>
    public bool Failed => (HigherIsWorse ? Last - First : First - Last) > Allowed;

    /// <summary>The verdict on <paramref name="values"/>, one per sample at <paramref name="minutes"/>, the warm-up already left out.</summary>
    public static SoakMetric Judge(
        string name, IReadOnlyList<double> minutes, IReadOnlyList<double> values, double relativeTolerance, double absoluteTolerance, bool higherIsWorse = true)
    {
        var third = Math.Max(1, values.Count / 3);
        var first = Sweep.Median(values.Take(third));
        var last = Sweep.Median(values.Skip(values.Count - third));
        return new SoakMetric(name, first, last, Slope(minutes, values) * 60, first * relativeTolerance + absoluteTolerance, higherIsWorse);
    }

    // Least squares, per minute.
    private static double Slope(IReadOnlyList<double> x, IReadOnlyList<double> y)
    {
        var meanX = x.Average();
        var meanY = y.Average();
        var covariance = x.Zip(y, (a, b) => (a - meanX) * (b - meanY)).Sum();
        var variance = x.Sum(a => (a - meanX) * (a - meanX));
        return variance == 0 ? 0 : covariance / variance;
    }
}
