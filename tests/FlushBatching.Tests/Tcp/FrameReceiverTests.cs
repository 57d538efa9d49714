using System.Threading.Channels;
using FlushBatching.Tcp;

namespace FlushBatching.Tests.Tcp;

/// <summary>The receive loop on its own, over a byte transport the test answers receive by receive.</summary>
public sealed class FrameReceiverTests
{
    [Fact]
    public async Task An_idle_connection_waits_for_bytes_with_an_empty_buffer_and_takes_a_buffer_only_to_read_them()
    {
        var io = new AnsweredIo();
        var receiving = new FrameReceiver(io, ConnectionSettings.Default).ReceiveFromPeerAsync();

        Assert.Equal(0, await io.NextReceiveLength());
        io.Answer(0); // bytes have arrived
        Assert.True(await io.NextReceiveLength() > 0);
        io.Answer(8);
        Assert.Equal(0, await io.NextReceiveLength());
        io.Answer(0); // the peer closed its side: the empty wait returns, and the read after it returns 0
        Assert.True(await io.NextReceiveLength() > 0);
        io.Answer(0);

        Assert.Null(await receiving.WaitAsync(TimeSpan.FromSeconds(10)));
    }

    // Each receive waits until the test answers it with a count; the test first reads how large its buffer was.
    private sealed class AnsweredIo : ConnectionIo
    {
        private readonly Channel<(int Length, TaskCompletionSource<int> Answer)> _receives = Channel.CreateUnbounded<(int, TaskCompletionSource<int>)>();
        private TaskCompletionSource<int>? _pending;

        public async Task<int> NextReceiveLength()
        {
            var (length, answer) = await _receives.Reader.ReadAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(10));
            _pending = answer;
            return length;
        }

        public void Answer(int received) => _pending!.SetResult(received);

        public override ValueTask<int> ReceiveAsync(Memory<byte> buffer)
        {
            var answer = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
            _receives.Writer.TryWrite((buffer.Length, answer));
            return new ValueTask<int>(answer.Task);
        }

        public override ValueTask SendAsync(List<ArraySegment<byte>> frames, long bytes) => ValueTask.CompletedTask;

        public override ValueTask ShutdownSendAsync() => ValueTask.CompletedTask;

        public override void Dispose()
        {
        }
    }
}
