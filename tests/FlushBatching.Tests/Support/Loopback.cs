using System.Collections.Concurrent;
using System.Net;
using FlushBatching.Tcp;

namespace FlushBatching.Tests.Support;

/// <summary>Real connections on 127.0.0.1: a listener and connected pairs.</summary>
public sealed class Loopback : IAsyncDisposable
{
    private readonly BlockingCollection<FramedConnection> _accepted = new();
    private readonly ConcurrentQueue<Exception> _rejected = new();
    private readonly TaskCompletionSource<Exception> _firstRejected = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly List<FramedConnection> _owned = [];

    private Loopback(ConnectionSettings serverSettings)
    {
        Listener = FramedListener.Start(new IPEndPoint(IPAddress.Loopback, 0), serverSettings, _accepted.Add, e =>
        {
            _rejected.Enqueue(e);
            _firstRejected.TrySetResult(e);
        });
    }

    public FramedListener Listener { get; }

    public IPEndPoint EndPoint => Listener.LocalEndPoint;

    public IReadOnlyCollection<Exception> Rejected => _rejected;

    public static Loopback Listen(ConnectionSettings? serverSettings = null) => new(serverSettings ?? ConnectionSettings.Default);

    /// <summary>Connects a client and returns it with the server side of the same connection.</summary>
    public async Task<(FramedConnection Client, FramedConnection Server)> ConnectAsync(ConnectionSettings? clientSettings = null)
    {
        var client = await FramedConnector.ConnectAsync(EndPoint, clientSettings ?? ConnectionSettings.Default);
        var server = await AcceptAsync();
        lock (_owned)
        {
            _owned.Add(client);
        }

        return (client, server);
    }

    public Task<FramedConnection> AcceptAsync() => Task.Run(() =>
    {
        if (!_accepted.TryTake(out var server, Poll.Patience))
        {
            Assert.Fail($"No connection was accepted within {Poll.Patience}; rejected: {string.Join("; ", _rejected.Select(e => e.Message))}");
        }

        lock (_owned)
        {
            _owned.Add(server!);
        }

        return server!;
    });

    /// <summary>Waits until the listener has rejected a connection, and returns the first reason.</summary>
    public Task<Exception> WaitRejectedAsync() => Poll.Within(_firstRejected.Task);

    public async ValueTask DisposeAsync()
    {
        await Listener.DisposeAsync();
        List<FramedConnection> owned;
        lock (_owned)
        {
            owned = [.. _owned];
        }

        foreach (var connection in owned)
        {
            await connection.DisposeAsync();
        }
    }
}
