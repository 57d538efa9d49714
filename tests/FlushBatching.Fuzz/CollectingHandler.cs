using System.Buffers;
using FlushBatching.Tcp;

namespace FlushBatching.Fuzz;

/// <summary>Keeps every frame a connection delivers, and how it ended.</summary>
internal sealed class CollectingHandler : IFrameHandler
{
    public List<byte[]> Frames { get; } = [];

    public TaskCompletionSource<Exception?> Closed { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public void OnFrame(FramedConnection connection, ReadOnlySequence<byte> payload) => Frames.Add(payload.ToArray());

    public void OnClosed(FramedConnection connection, Exception? reason) => Closed.TrySetResult(reason);
}
