using BenchmarkDotNet.Attributes;
using FlushBatching.Batching;

namespace FlushBatching.Benchmarks;

/// <summary>
/// What deciding a flush costs per write: the core's policy (count, bytes and the interval's clock read) against a
/// bare write counter, which is all stock's flush consolidation keeps.
/// </summary>
[MemoryDiagnoser]
public class FlushPolicyBenchmarks
{
    private const int Writes = 1000;

    private FlushPolicy _policy = null!;
    private int _count;

    [GlobalSetup]
    public void Setup() => _policy = new FlushPolicy(BatchingSettings.Default, TimeProvider.System);

    [Benchmark(Baseline = true, OperationsPerInvoke = Writes)]
    public int CountOnly()
    {
        var flushes = 0;
        for (var i = 0; i < Writes; i++)
        {
            if (++_count == BatchingSettings.Default.MaxPendingWrites)
            {
                _count = 0;
                flushes++;
            }
        }

        return flushes;
    }

    [Benchmark(OperationsPerInvoke = Writes)]
    public int Policy()
    {
        var flushes = 0;
        for (var i = 0; i < Writes; i++)
        {
            if (_policy.OnWrite(100) != FlushReason.None)
            {
                _policy.OnFlushed();
                flushes++;
            }
        }

        return flushes;
    }
}
