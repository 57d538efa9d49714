using System.Net;
using System.Net.Sockets;
using FlushBatching.Akka.Tests.Support;
using FlushBatching.Tcp;
using FlushBatching.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// The DotNetty stack's listener out of file descriptors (EMFILE on every accept while connections wait in the
/// backlog) pauses accepting as the core's listener does, where DotNetty's own server channel retries at once and spins
/// a core, and accepts again once descriptors are free. Changes the process's descriptor limit: this assembly runs one
/// test at a time.
/// </summary>
public sealed class DotNettyAcceptErrorTests
{
    [LinuxTheory("lowers RLIMIT_NOFILE through libc and counts /proc/self/fd")]
    [InlineData("thread-pool")]
    [InlineData("dedicated")]
    public async Task Out_of_descriptors_the_listener_pauses_reports_once_a_second_and_accepts_again_when_they_free(string eventLoop)
    {
        var stack = new DotNettyConnectionStack(ConnectionSettings.Default, 1, 1, DotNettyLoops.Parse(eventLoop));
        var accepted = new List<ITransportConnection>();
        var rejections = new List<Exception>();
        var endpoint = await stack.ListenAsync(new IPEndPoint(IPAddress.Loopback, 0),
            c => { lock (accepted) { accepted.Add(c); } },
            e => { lock (rejections) { rejections.Add(e); } });

        // Client sockets made before the limit comes down, so connecting them takes no new descriptor here. The limit
        // leaves 8 descriptors free, for the runtime and a few accepts.
        var clients = Enumerable.Range(0, 24).Select(_ => new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp)).ToList();
        try
        {
            ThreadCpu? threads = null;
            using (var limit = DescriptorLimit.LeaveFree(8, () => threads = new ThreadCpu()))
            {
                foreach (var client in clients)
                {
                    await client.ConnectAsync(endpoint);
                }

                // Two seconds out of descriptors, with connections in the backlog that no accept can take, measured after
                // a second of it. DotNetty's own channel spins a core here (0.86 of one, measured with a node under
                // ulimit -n 256). The JIT compiler's thread is left out: on a loaded machine it recompiled hot methods
                // through the whole window, 0.2 to 0.3 of a core (perf), and failed this test with no spin anywhere.
                await Task.Delay(TimeSpan.FromSeconds(1));
                var cpuBefore = threads!.Total();
                await Task.Delay(TimeSpan.FromSeconds(2));
                var cpu = threads.Total() - cpuBefore;
                limit.Restore();
                threads.Dispose();

                Assert.True(cpu < TimeSpan.FromSeconds(0.4), $"{cpu.TotalMilliseconds:N0} ms of CPU in 2 s out of descriptors (at most 0.2 of a core)");
                lock (rejections)
                {
                    Assert.InRange(rejections.Count, 2, 5);
                    Assert.Contains("accepting again in 1s", rejections[0].Message);
                }
            }

            await Poll.Until(() => { lock (accepted) { return accepted.Count == clients.Count; } }, "the waiting connections to be accepted once descriptors are free");
        }
        finally
        {
            clients.ForEach(client => client.Dispose());
            await stack.StopListeningAsync();
            await stack.StopAsync();
        }
    }
}
