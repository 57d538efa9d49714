using FlushBatching.Tcp;
using FlushBatching.Tcp.Io;

namespace FlushBatching.Fuzz;

/// <summary>
/// A peer that sends the fuzzer's bytes, in reads cut as <see cref="FuzzTargets.Segmented"/> cuts them, then closes;
/// it takes every byte sent to it.
/// </summary>
internal sealed class ReplayIo(ReadOnlyMemory<byte> bytes, byte seed) : ConnectionIo
{
    private readonly Queue<ReadOnlyMemory<byte>> _reads = Reads(FuzzTargets.Segmented(bytes, seed));

    private ReadOnlyMemory<byte> _current;

    public override ValueTask<int> ReceiveAsync(Memory<byte> buffer)
    {
        if (_current.IsEmpty && !_reads.TryDequeue(out _current))
        {
            return ValueTask.FromResult(0);
        }

        var length = Math.Min(buffer.Length, _current.Length);
        _current[..length].CopyTo(buffer);
        _current = _current[length..];
        return ValueTask.FromResult(length);
    }

    public override ValueTask SendAsync(List<ArraySegment<byte>> frames, long bytes) => ValueTask.CompletedTask;

    public override ValueTask ShutdownSendAsync() => ValueTask.CompletedTask;

    public override void Dispose()
    {
    }

    // A socket never reads zero bytes but at the end: the empty segments are left out.
    private static Queue<ReadOnlyMemory<byte>> Reads(System.Buffers.ReadOnlySequence<byte> sequence)
    {
        var reads = new Queue<ReadOnlyMemory<byte>>();
        foreach (var read in sequence)
        {
            if (!read.IsEmpty)
            {
                reads.Enqueue(read);
            }
        }

        return reads;
    }
}
