using System.Net;
using System.Net.Sockets;
using FlushBatching.Tcp;
using FlushBatching.Tests.Support;

namespace FlushBatching.Tests.Tcp;

/// <summary>A connect or a bind that fails gives its socket back at once, not when a finalizer gets to it.</summary>
[Collection(nameof(DescriptorLimitCollection))] // counts this process's descriptors, so nothing may open any beside it
public sealed class DescriptorLeakTests
{
    private const int Attempts = 200;

    [LinuxFact("counts /proc/self/fd")]
    public async Task Refused_connects_and_binds_of_a_port_in_use_leave_no_descriptor_open()
    {
        var closed = RawPeer.ClosedEndPoint();

        await using var taken = Loopback.Listen();
        var before = OpenDescriptors();
        for (var i = 0; i < Attempts; i++)
        {
            await Assert.ThrowsAsync<IOException>(() => FramedConnector.ConnectAsync(closed, ConnectionSettings.Default));
            Assert.Throws<SocketException>(() => FramedListener.Start(taken.EndPoint, ConnectionSettings.Default, _ => { }));
        }

        // A leak would be one descriptor a failure, 2 x 200 here; the slack is for the runtime's own.
        Assert.InRange(OpenDescriptors() - before, int.MinValue, 20);
    }

    private static int OpenDescriptors() => Directory.GetFiles("/proc/self/fd").Length;
}
