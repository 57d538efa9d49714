using System.Collections.Concurrent;

namespace FlushBatching.Akka;

/// <summary>The connections a transport has open, each forgotten when it ends, so that shutdown can close the rest.</summary>
/// <typeparam name="T">The connection type: a core connection or a DotNetty channel.</typeparam>
internal sealed class OpenConnections<T>
    where T : notnull
{
    private readonly ConcurrentDictionary<T, byte> _open = new();

    /// <summary>Holds <paramref name="connection"/> until <paramref name="ended"/> completes.</summary>
    public void Add(T connection, Task ended)
    {
        _open[connection] = 0;
        ended.ContinueWith(
            static (_, state) =>
            {
                var (open, connection) = ((ConcurrentDictionary<T, byte>, T))state!;
                open.TryRemove(connection, out var _);
            },
            (_open, connection),
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously,
            TaskScheduler.Default);
    }

    /// <summary>Closes every connection still open and waits for all of them.</summary>
    public Task CloseAll(Func<T, Task> close) => Task.WhenAll(_open.Keys.Select(close));
}
