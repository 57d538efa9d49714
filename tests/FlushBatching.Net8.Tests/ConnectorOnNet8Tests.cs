using System.Net;
using System.Net.Sockets;
using FlushBatching.Tcp;

namespace FlushBatching.Net8.Tests;

/// <summary>
/// The core's connector on the .NET 8 runtime. There, on Linux and macOS, a socket whose options were set before it
/// connects cannot connect by <see cref="DnsEndPoint"/>: the runtime copies it for each address the name resolves to,
/// and the copy throws <see cref="PlatformNotSupportedException"/> (.NET 10 changed that). Every socket the connector
/// makes has its options set first, so connecting by name failed on .NET 8 with an error its docs do not name.
/// </summary>
public sealed class ConnectorOnNet8Tests
{
    // Keep-alive and buffer sizes: the options whose setting before the connect the .NET 8 runtime could not copy.
    private static readonly ConnectionSettings WithOptions = ConnectionSettings.Default.WithKeepAlive(true).WithSendBufferSize(256 * 1024).WithReceiveBufferSize(256 * 1024);

    [Fact]
    public void These_tests_run_on_the_dotnet_8_runtime()
    {
        Assert.Equal(8, Environment.Version.Major);
    }

    [Fact]
    public async Task Connecting_by_host_name_with_socket_options_set_connects()
    {
        var accepted = new TaskCompletionSource<FramedConnection>(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var listener = FramedListener.Start(new IPEndPoint(IPAddress.Loopback, 0), ConnectionSettings.Default, connection => accepted.TrySetResult(connection));

        await using var client = await FramedConnector.ConnectAsync("localhost", listener.LocalEndPoint.Port, WithOptions).WaitAsync(TimeSpan.FromSeconds(30));
        await using var server = await accepted.Task.WaitAsync(TimeSpan.FromSeconds(30));

        Assert.Equal(listener.LocalEndPoint.Port, client.RemoteEndPoint.Port);
    }

    [Fact]
    public async Task Connecting_by_host_name_to_a_closed_port_fails_with_the_documented_IOException()
    {
        int port;
        using (var probe = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp))
        {
            probe.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            port = ((IPEndPoint)probe.LocalEndPoint!).Port;
        }

        var refused = await Assert.ThrowsAsync<IOException>(() => FramedConnector.ConnectAsync("localhost", port, WithOptions).WaitAsync(TimeSpan.FromSeconds(30)));
        Assert.Contains($":{port}", refused.Message);
        Assert.Equal(SocketError.ConnectionRefused, Assert.IsType<SocketException>(refused.InnerException).SocketErrorCode);
    }
}
