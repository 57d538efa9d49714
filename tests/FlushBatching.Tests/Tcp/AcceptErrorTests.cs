using System.Net;
using System.Net.Sockets;
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
    [LinuxFact("lowers RLIMIT_NOFILE through libc and counts /proc/self/fd")]
    public async Task Out_of_descriptors_the_listener_reports_once_a_second_and_accepts_again_when_they_free()
    {
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
        // leaves 8 descriptors free, for the runtime and a few accepts.
        var clients = Enumerable.Range(0, 24).Select(_ => new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp)).ToList();
        using (var limit = DescriptorLimit.LeaveFree(8))
        {
            foreach (var client in clients)
            {
                await client.ConnectAsync(listener.LocalEndPoint);
            }

            // Two seconds out of descriptors, with connections in the backlog that no accept can take.
            var cpuBefore = Environment.CpuUsage.TotalTime;
            await Task.Delay(TimeSpan.FromSeconds(2));

            var cpu = Environment.CpuUsage.TotalTime - cpuBefore;
            limit.Restore();

            Assert.InRange(Volatile.Read(ref rejections), 1, 4);
            Assert.Contains("TooManyOpenSockets", firstRejection!.Message);

            // A spinning loop takes a whole core for the two seconds.
            Assert.True(cpu < TimeSpan.FromSeconds(1), $"{cpu.TotalMilliseconds:N0} ms of CPU in 2 s out of descriptors");
        }

        await Poll.Until(() => { lock (accepted) { return accepted.Count == clients.Count; } }, "the waiting connections to be accepted once descriptors are free");
        foreach (var connection in accepted)
        {
            await connection.DisposeAsync();
        }

        clients.ForEach(client => client.Dispose());
    }
}
