using System.Net;
using System.Net.Sockets;

using FlushBatching.Tests.Support;

namespace FlushBatching.Akka.Tests.Support;

/// <summary>
/// A TCP relay on loopback that passes bytes both ways between its clients and one target port, until told to stop
/// reading from its clients: then, to a client, the node behind it is a peer that has stopped reading (a long GC pause,
/// a paused VM), while the relay itself still holds its sockets open.
/// </summary>
public sealed class Relay : IAsyncDisposable
{
    private readonly Socket _listener;
    private readonly int _target;
    private readonly List<Socket> _sockets = [];
    private readonly TaskCompletionSource _frozen = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly CancellationTokenSource _stopping = new();

    private Relay(int target)
    {
        _target = target;

        // A small window toward the clients, so a client's writes back up soon after the relay stops reading.
        _listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveBufferSize = 16 * 1024 };
        _listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        _listener.Listen(16);
        Port = ((IPEndPoint)_listener.LocalEndPoint!).Port;
        _ = AcceptAsync();
    }

    /// <summary>The port clients connect to.</summary>
    public int Port { get; }

    /// <summary>Starts a relay to <paramref name="target"/> on 127.0.0.1.</summary>
    public static Relay Start(int target) => new(target);

    /// <summary>From now on nothing more is read from any client; what the target sends still reaches them.</summary>
    public void StopReading() => _frozen.TrySetResult();

    public async ValueTask DisposeAsync()
    {
        await _stopping.CancelAsync();
        _listener.Dispose();
        lock (_sockets)
        {
            _sockets.ForEach(socket => socket.Dispose());
        }
    }

    private async Task AcceptAsync()
    {
        while (!_stopping.IsCancellationRequested)
        {
            Socket client, target;
            try
            {
                client = await _listener.AcceptAsync(_stopping.Token);
                target = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
                await target.ConnectAsync(new IPEndPoint(IPAddress.Loopback, _target), _stopping.Token);
            }
            catch (Exception) when (_stopping.IsCancellationRequested)
            {
                return;
            }

            lock (_sockets)
            {
                _sockets.Add(client);
                _sockets.Add(target);
            }

            _ = PumpAsync(client, target, _frozen.Task);
            _ = PumpAsync(target, client, null);
        }
    }

    private async Task PumpAsync(Socket from, Socket to, Task? frozen)
    {
        var buffer = new byte[16 * 1024];
        try
        {
            while (true)
            {
                if (frozen is { IsCompleted: true })
                {
                    await Task.Delay(Timeout.Infinite, _stopping.Token);
                }

                var read = await from.ReceiveAsync(buffer, SocketFlags.None, _stopping.Token);
                if (read == 0)
                {
                    to.Shutdown(SocketShutdown.Send);
                    return;
                }

                await to.SendAsync(buffer.AsMemory(0, read), SocketFlags.None, _stopping.Token);
            }
        }
        catch (Exception)
        {
            // The other end closed or reset, or the relay is stopping: this direction is over.
            to.Dispose();
            from.Dispose();
        }
    }
}
