using System.Runtime.InteropServices;

namespace FlushBatching.Akka.Tests.Support;

/// <summary>
/// The CPU this process's threads have used, leaving out the runtime's JIT compiler thread (".NET Tiered Com"), read
/// from /proc/self/task/*/stat through files opened when made: it can be read while the process has no descriptor
/// left. A spin in a listener or an event loop shows here, on a pool thread or a loop's own; the background
/// recompiling of hot methods, which on a loaded machine runs for seconds after a test starts, does not. Threads
/// started after it is made are not counted. Linux only.
/// </summary>
public sealed class ThreadCpu : IDisposable
{
    private const string Compiler = ".NET Tiered Com";
    private static readonly long TicksPerSecond = sysconf(2); // _SC_CLK_TCK

    private readonly List<FileStream> _stats = [];
    private readonly byte[] _buffer = new byte[1024];

    public ThreadCpu()
    {
        foreach (var task in Directory.GetDirectories("/proc/self/task"))
        {
            FileStream stat;
            try
            {
                stat = new FileStream(Path.Combine(task, "stat"), FileMode.Open, FileAccess.Read, FileShare.ReadWrite, bufferSize: 0);
            }
            catch (IOException)
            {
                continue; // the thread ended
            }

            if (Read(stat) is { } line && Name(line) == Compiler)
            {
                stat.Dispose();
                continue;
            }

            _stats.Add(stat);
        }
    }

    /// <summary>User and system time of every thread counted, as of now.</summary>
    public TimeSpan Total()
    {
        long ticks = 0;
        foreach (var stat in _stats)
        {
            if (Read(stat) is { } line)
            {
                // After the name: state is field 3; utime and stime are fields 14 and 15 of the whole line.
                var fields = line[(line.LastIndexOf(')') + 2)..].Split(' ');
                ticks += long.Parse(fields[11]) + long.Parse(fields[12]);
            }
        }

        return TimeSpan.FromSeconds((double)ticks / TicksPerSecond);
    }

    public void Dispose() => _stats.ForEach(stat => stat.Dispose());

    private static string Name(string line) => line[(line.IndexOf('(') + 1)..line.LastIndexOf(')')];

    // A thread that ended reads as nothing, so its time drops out of the total (the process's own count keeps it): a
    // window in which a thread ends reads low. The accept-error test holds the pool's threads, so none end there.
    private string? Read(FileStream stat)
    {
        try
        {
            stat.Seek(0, SeekOrigin.Begin);
            var length = stat.Read(_buffer);
            return length == 0 ? null : System.Text.Encoding.ASCII.GetString(_buffer, 0, length);
        }
        catch (IOException)
        {
            return null;
        }
    }

    [DllImport("libc")]
    private static extern long sysconf(int name);
}
