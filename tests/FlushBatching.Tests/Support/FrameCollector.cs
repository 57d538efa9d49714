using System.Buffers;
using FlushBatching.Tcp;

namespace FlushBatching.Tests.Support;

/// <summary>A frame handler that keeps a copy of every frame and lets a test wait for a count or the end.</summary>
public sealed class FrameCollector : IFrameHandler
{
    private readonly List<byte[]> _frames = [];
    private readonly TaskCompletionSource<Exception?> _closed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _closedCalls;

    public int ClosedCalls => Volatile.Read(ref _closedCalls);

    public Task<Exception?> Closed => _closed.Task;

    public IReadOnlyList<byte[]> Frames
    {
        get
        {
            lock (_frames)
            {
                return _frames.ToList();
            }
        }
    }

    public int Count
    {
        get
        {
            lock (_frames)
            {
                return _frames.Count;
            }
        }
    }

    public Action<FramedConnection, byte[]>? OnEach { get; set; }

    public void OnFrame(FramedConnection connection, ReadOnlySequence<byte> payload)
    {
        var copy = payload.ToArray();
        lock (_frames)
        {
            _frames.Add(copy);
            Monitor.PulseAll(_frames);
        }

        OnEach?.Invoke(connection, copy);
    }

    /// <summary>Whether the connection had released its socket (<see cref="FramedConnection.Completion"/>) when the handler heard of its end.</summary>
    public bool CompletedWhenClosed { get; private set; }

    public void OnClosed(FramedConnection connection, Exception? reason)
    {
        CompletedWhenClosed = connection.Completion.IsCompleted;
        Interlocked.Increment(ref _closedCalls);
        _closed.TrySetResult(reason);
    }

    /// <summary>Waits until <paramref name="count"/> frames have arrived; fails the test after <see cref="Poll.Patience"/>.</summary>
    public Task WaitForCountAsync(int count) => Task.Run(() =>
    {
        var deadline = DateTime.UtcNow + Poll.Patience;
        lock (_frames)
        {
            while (_frames.Count < count)
            {
                var left = deadline - DateTime.UtcNow;
                if (left <= TimeSpan.Zero || !Monitor.Wait(_frames, left))
                {
                    Assert.Fail($"Only {_frames.Count} of {count} frames arrived within {Poll.Patience}.");
                }
            }
        }
    });

    /// <summary>Waits for the connection's end and returns its reason; fails the test after <see cref="Poll.Patience"/>.</summary>
    public async Task<Exception?> WaitClosedAsync() => await Poll.Within(Closed);
}
