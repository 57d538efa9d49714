using System.Threading.Channels;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Io;
using FlushBatching.Tcp.Loops;
using FlushBatching.Tests.Support;
using Microsoft.Extensions.Time.Testing;

namespace FlushBatching.Tests.Tcp;

/// <summary>The receive loop on its own, over a byte transport the test answers receive by receive.</summary>
public sealed class FrameReceiverTests
{
    private readonly FakeTimeProvider _clock = new();
    private readonly AnsweredIo _io = new();

    [Fact]
    public async Task A_busy_connection_receives_straight_into_a_buffer()
    {
        var receiving = new FrameReceiver(_io, ConnectionSettings.Default.WithTimeProvider(_clock)).ReceiveFromPeerAsync();

        for (var i = 0; i < 3; i++)
        {
            Assert.True(await _io.NextReceiveLength() > 0);
            _clock.Advance(FrameReceiver.QuietAfter / 2);
            _io.Answer(8);
        }

        Assert.True(await _io.NextReceiveLength() > 0);
        _io.Answer(0); // the peer closed its side

        Assert.Null(await Poll.Within(receiving));
    }

    [Fact]
    public async Task A_quiet_connection_waits_for_its_next_bytes_with_an_empty_buffer_until_bytes_come_quickly_again()
    {
        var receiving = new FrameReceiver(_io, ConnectionSettings.Default.WithTimeProvider(_clock)).ReceiveFromPeerAsync();

        Assert.True(await _io.NextReceiveLength() > 0);
        _clock.Advance(FrameReceiver.QuietAfter + TimeSpan.FromTicks(1));
        _io.Answer(8);
        Assert.Equal(0, await _io.NextReceiveLength()); // quiet: no buffer held while waiting
        _clock.Advance(TimeSpan.FromMinutes(1));
        _io.Answer(0); // bytes have arrived
        Assert.True(await _io.NextReceiveLength() > 0);
        _io.Answer(8);
        Assert.Equal(0, await _io.NextReceiveLength()); // the wait before these bytes was long: still quiet
        _io.Answer(0);
        Assert.True(await _io.NextReceiveLength() > 0);
        _io.Answer(8);
        Assert.True(await _io.NextReceiveLength() > 0); // these came at once: busy again
        _io.Answer(0);

        Assert.Null(await Poll.Within(receiving));
    }

    // Each receive waits until the test answers it with a count; the test first reads how large its buffer was.
    private sealed class AnsweredIo : ConnectionIo
    {
        private readonly Channel<(int Length, TaskCompletionSource<int> Answer)> _receives = Channel.CreateUnbounded<(int, TaskCompletionSource<int>)>();
        private TaskCompletionSource<int>? _pending;

        public async Task<int> NextReceiveLength()
        {
            var (length, answer) = await Poll.Within(_receives.Reader.ReadAsync().AsTask());
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
