using System.Runtime.InteropServices;

namespace FlushBatching.Tests.Support;

/// <summary>
/// Runs a listener out of file descriptors: this process's RLIMIT_NOFILE lowered to a few above what it has open, until
/// disposed. It changes the whole process's limit, so the test using it runs in a collection of its own with
/// parallelization off. Linux only.
/// </summary>
public sealed class DescriptorLimit : IDisposable
{
    private const int NoFile = 7; // RLIMIT_NOFILE on Linux

    // The thread pool's threads while the limit is down: started before it, and no more after.
    private const int PoolThreads = 16;

    private readonly Limit _original;
    private readonly (int Workers, int Io) _min;
    private readonly (int Workers, int Io) _max;
    private int _restored;

    private DescriptorLimit(Limit original, (int Workers, int Io) min, (int Workers, int Io) max)
    {
        _original = original;
        _min = min;
        _max = max;
    }

    /// <summary>
    /// Lowers the limit to <paramref name="free"/> descriptors above those open now. What the runtime would open a file
    /// for while none is left (the assembly that formats stack traces, the console's writers, new thread-pool threads)
    /// is loaded and started first, and the pool may start no thread past those until the limit is restored: the
    /// runtime fails the process ("Out of memory.") when it finds no descriptor. On a loaded machine the pool adds threads when its queue stalls:
    /// two runs of the Akka suite beside five test processes on 2 cores ended that way, in this limit's test, while the
    /// pool could still grow (that a new pool thread took the descriptor there is likely, not proven). The console's
    /// writers open their descriptor on first use: CI's run of the Akka suite on the floor version crashed here when a
    /// log line went to Akka's standard-out logger (an ActorSystem before its loggers start or after they stop) for the
    /// first time inside the window ("Too many open files" in StandardOutWriter's type initializer, which reads both
    /// writers). A write through StandardOutWriter from a pool thread inside the window, tried by hand, failed the same
    /// way in the console's first-write setup until the empty write below was made.
    /// <paramref name="beforeLowering"/>, if given, runs once the pool's threads are started and before the limit comes
    /// down: what must see every pool thread and open files for it does it there.
    /// </summary>
    public static DescriptorLimit LeaveFree(int free, Action? beforeLowering = null)
    {
        _ = new System.Diagnostics.StackTrace(new InvalidOperationException(), fNeedFileInfo: true).ToString();
        _ = (Console.Out, Console.Error);
        using (var stdout = Console.OpenStandardOutput())
        {
            stdout.Write(ReadOnlySpan<byte>.Empty); // the console's first write sets up the terminal and its signal pipe
        }

        ThreadPool.GetMinThreads(out var minWorkers, out var minIo);
        ThreadPool.GetMaxThreads(out var maxWorkers, out var maxIo);
        var workers = Math.Max(Math.Max(minWorkers, PoolThreads), Environment.ProcessorCount);
        ThreadPool.SetMinThreads(workers, minIo);
        Task.WaitAll(Enumerable.Range(0, workers).Select(_ => Task.Run(() => Thread.Sleep(100))).ToArray());
        var held = Math.Max(workers, ThreadPool.ThreadCount);
        if (!ThreadPool.SetMaxThreads(held, maxIo))
        {
            throw new InvalidOperationException($"the thread pool refused a maximum of {held} threads");
        }

        beforeLowering?.Invoke();
        var original = Get();
        var lowered = new DescriptorLimit(original, (minWorkers, minIo), (maxWorkers, maxIo));
        Set(original with { Current = (ulong)Directory.GetFiles("/proc/self/fd").Length + (ulong)free });
        return lowered;
    }

    /// <summary>Gives the process its descriptors back; disposing does it too, if not done before.</summary>
    public void Restore()
    {
        if (Interlocked.Exchange(ref _restored, 1) == 0)
        {
            Set(_original);
            ThreadPool.SetMaxThreads(_max.Workers, _max.Io);
            ThreadPool.SetMinThreads(_min.Workers, _min.Io);
        }
    }

    public void Dispose() => Restore();

    private static Limit Get() => getrlimit(NoFile, out var limit) == 0 ? limit : throw new InvalidOperationException($"getrlimit failed: {Marshal.GetLastPInvokeError()}");

    private static void Set(Limit limit)
    {
        if (setrlimit(NoFile, in limit) != 0)
        {
            throw new InvalidOperationException($"setrlimit failed: {Marshal.GetLastPInvokeError()}");
        }
    }

    [DllImport("libc", SetLastError = true)]
    private static extern int getrlimit(int resource, out Limit limit);

    [DllImport("libc", SetLastError = true)]
    private static extern int setrlimit(int resource, in Limit limit);

    [StructLayout(LayoutKind.Sequential)]
    private record struct Limit(ulong Current, ulong Maximum);
}
