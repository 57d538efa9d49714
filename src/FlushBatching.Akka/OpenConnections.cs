using System.Collections.Concurrent;

namespace FlushBatching.Akka;

/// <summary>The connections a transport has open, each forgotten when it ends, so that shutdown can close the rest.</summary>
internal sealed class OpenConnections
{
    private readonly ConcurrentDictionary<ITransportConnection, byte> _open = new();

    /// <summary>Holds <paramref name="connection"/> until it ends.</summary>
    public void Add(ITransportConnection connection)
    {
        _open[connection] = 0;
        connection.Completion.ContinueWith(
            static (_, state) =>
            {
                var (open, connection) = ((ConcurrentDictionary<ITransportConnection, byte>, ITransportConnection))state!;
                open.TryRemove(connection, out var _);
            },
            (_open, connection),
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously,
            TaskScheduler.Default);
    }

    /// <summary>Closes every connection still open, sending what each has queued first, and waits for all of them.</summary>
    public Task CloseAll() => Task.WhenAll(_open.Keys.Select(connection => connection.CloseAsync()));
}
