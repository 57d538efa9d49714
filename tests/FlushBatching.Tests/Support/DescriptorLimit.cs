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

    private readonly Limit _original;
    private readonly int _minWorkers;
    private readonly int _minIo;
    private int _restored;

    private DescriptorLimit(Limit original, int minWorkers, int minIo)
    {
        _original = original;
        _minWorkers = minWorkers;
        _minIo = minIo;
    }

    /// <summary>
    /// Lowers the limit to <paramref name="free"/> descriptors above those open now. What the runtime would open a file
    /// for while none is left (the assembly that formats stack traces, new thread-pool threads) is loaded and started
    /// first: the runtime fails the process when it finds no descriptor.
    /// </summary>
    public static DescriptorLimit LeaveFree(int free)
    {
        _ = new System.Diagnostics.StackTrace(new InvalidOperationException(), fNeedFileInfo: true).ToString();
        ThreadPool.GetMinThreads(out var workers, out var io);
        ThreadPool.SetMinThreads(Math.Max(workers, 16), io);
        Task.WaitAll(Enumerable.Range(0, 16).Select(_ => Task.Run(() => Thread.Sleep(100))).ToArray());
        var original = Get();
        var lowered = new DescriptorLimit(original, workers, io);
        Set(original with { Current = (ulong)Directory.GetFiles("/proc/self/fd").Length + (ulong)free });
        return lowered;
    }

    /// <summary>Gives the process its descriptors back; disposing does it too, if not done before.</summary>
    public void Restore()
    {
        if (Interlocked.Exchange(ref _restored, 1) == 0)
        {
            Set(_original);
            ThreadPool.SetMinThreads(_minWorkers, _minIo);
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
