using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using FlushBatching.Tcp;
using FlushBatching.Tests.Support;

namespace FlushBatching.Tests.Tcp;

/// <summary>Changes this process's descriptor limit, so nothing else may run beside it.</summary>
[CollectionDefinition(nameof(DescriptorLimitCollection), DisableParallelization = true)]
public sealed class DescriptorLimitCollection;

/// <summary>
/// A listener out of file descriptors (EMFILE on every accept while connections wait in the backlog) pauses accepting
/// instead of retrying at once, and accepts again once descriptors are free.
/// </summary>
[Collection(nameof(DescriptorLimitCollection))]
public sealed class AcceptErrorTests
{
    private const int NoFile = 7; // RLIMIT_NOFILE on Linux

    [Fact]
    public async Task Out_of_descriptors_the_listener_reports_once_a_second_and_accepts_again_when_they_free()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        var rejections = 0;
        Exception? firstRejection = null;
        var accepted = new List<FramedConnection>();
        await using var listener = FramedListener.Start(new IPEndPoint(IPAddress.Loopback, 0), ConnectionSettings.Default,
            c => { lock (accepted) { accepted.Add(c); } },
            e =>
            {
                Interlocked.CompareExchange(ref firstRejection, e, null);
                Interlocked.Increment(ref rejections);
            });

        // Client sockets made before the limit comes down, so connecting them takes no new descriptor here. The limit
        // leaves 8 descriptors free, for the runtime (which fails the process when it finds none) and a few accepts.
        var clients = Enumerable.Range(0, 24).Select(_ => new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp)).ToList();
        // What the runtime would open a file for while no descriptor is left: the assembly that formats stack traces,
        // and thread-pool threads (each new one opens files). Loaded and started now, before the limit comes down.
        _ = new System.Diagnostics.StackTrace(new InvalidOperationException(), fNeedFileInfo: true).ToString();
        ThreadPool.GetMinThreads(out var workers, out var io);
        ThreadPool.SetMinThreads(Math.Max(workers, 16), io);
        await Task.WhenAll(Enumerable.Range(0, 16).Select(_ => Task.Run(() => Thread.Sleep(100))));
        var limit = GetLimit();
        var lowered = limit with { Current = (ulong)OpenDescriptors() + 8 };
        try
        {
            SetLimit(lowered);
            foreach (var client in clients)
            {
                await client.ConnectAsync(listener.LocalEndPoint);
            }

            // Two seconds out of descriptors, with connections in the backlog that no accept can take.
            var cpuBefore = Environment.CpuUsage.TotalTime;
            await Task.Delay(TimeSpan.FromSeconds(2));

            var cpu = Environment.CpuUsage.TotalTime - cpuBefore;
            SetLimit(limit);

            Assert.InRange(Volatile.Read(ref rejections), 1, 4);
            Assert.Contains("TooManyOpenSockets", firstRejection!.Message);

            // A spinning loop takes a whole core for the two seconds.
            Assert.True(cpu < TimeSpan.FromSeconds(1), $"{cpu.TotalMilliseconds:N0} ms of CPU in 2 s out of descriptors");
        }
        finally
        {
            SetLimit(limit);
            ThreadPool.SetMinThreads(workers, io);
        }

        await Condition.PollAsync(() => { lock (accepted) { return accepted.Count == clients.Count; } }, "the waiting connections to be accepted once descriptors are free");
        foreach (var connection in accepted)
        {
            await connection.DisposeAsync();
        }

        clients.ForEach(client => client.Dispose());
    }

    private static int OpenDescriptors() => Directory.GetFiles("/proc/self/fd").Length;


    private static Limit GetLimit() => getrlimit(NoFile, out var limit) == 0 ? limit : throw new InvalidOperationException($"getrlimit failed: {Marshal.GetLastPInvokeError()}");

    private static void SetLimit(Limit limit)
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
