using DotNetty.Buffers;
using DotNetty.Common.Utilities;
using DotNetty.Transport.Channels;
using DotNetty.Transport.Channels.Embedded;
using FlushBatching.Diagnostics;

namespace FlushBatching.DotNetty.Tests;

/// <summary>The handler suite with write combining on, as by default, and the combining itself.</summary>
public sealed class BatchingWriterHandlerTests : BatchingWriterHandlerSuite
{
    protected override int CombineBufferSize => BatchingWriterHandler.DefaultCombineBufferSize;

    [Fact]
    public void Small_writes_reach_the_socket_end_as_one_combined_buffer_per_flush()
    {
        Start(Settings(writes: 4));
        WriteMany(6);
        Channel.RunPendingTasks();

        Assert.Equal([[0, 1, 2, 3], [4, 5]], ReadBuffers());
        Assert.Equal(2, Probe.Flushes);
        AssertAllSentInOrder();
    }

    [Fact]
    public void A_lone_small_write_goes_down_as_it_is_without_a_copy()
    {
        Start(Settings());
        var buffer = Buffer(8, 0);
        var written = Channel.WriteAsync(buffer);
        Channel.RunPendingTasks();

        var sent = Channel.ReadOutbound<IByteBuffer>();
        Assert.Same(buffer, sent);
        Assert.True(written.IsCompletedSuccessfully);
        Assert.Equal(1, Probe.Flushes);
        sent.Release();
    }

    [Fact]
    public void A_held_write_is_combined_first_when_a_second_joins_it_and_before_a_write_that_passes_through()
    {
        Start(Settings());
        Write();
        Write(size: LargeWrite);
        Write();
        Write();
        Channel.RunPendingTasks();

        Assert.Equal([[0], [1], [2, 3]], ReadBuffers());
        AssertAllSentInOrder();
    }

    [Fact]
    public void A_write_of_exactly_half_the_combine_buffer_is_still_combined()
    {
        Start(Settings());
        Write();
        Write(size: BatchingWriterHandler.DefaultCombineBufferSize / 2);
        Write(size: BatchingWriterHandler.DefaultCombineBufferSize / 2 + 1);
        Channel.RunPendingTasks();

        Assert.Equal([[0, 1], [2]], ReadBuffers());
        AssertAllSentInOrder();
    }

    [Fact]
    public void A_large_write_passes_through_as_it_is_after_what_was_combined_before_it()
    {
        Start(Settings());
        Write();
        Write();
        Write(size: LargeWrite);
        Write();
        Channel.RunPendingTasks();

        Assert.Equal([[0, 1], [2], [3]], ReadBuffers());
        Assert.Equal(1, Probe.Flushes);
        AssertAllSentInOrder();
    }

    [Fact]
    public void A_full_combine_buffer_goes_down_and_a_new_one_starts()
    {
        // Messages of just over a third of the buffer: two fit, the third starts a new one; all go out in one flush.
        Start(Settings(bytes: 1024 * 1024));
        var size = (CombineBufferSize / 3) + 1;
        Write(size);
        Write(size);
        Write(size);
        Channel.RunPendingTasks();

        Assert.Equal([[0, 1], [2]], ReadBuffers());
        Assert.Equal(1, Probe.Flushes);
        AssertAllSentInOrder();
    }

    [Fact]
    public void A_write_whose_full_combine_buffer_turns_the_channel_unwritable_goes_out_with_the_drain()
    {
        // The third write sends the full combine buffer down first, which passes the high-water mark: the drain that
        // follows must flush the third too (it once left it combined and unflushed, waiting for a next write), and
        // nothing waits for the burst's end.
        Start(Settings(bytes: 1024 * 1024));
        Channel.Configuration.WriteBufferHighWaterMark = CombineBufferSize / 2;
        Channel.Configuration.WriteBufferLowWaterMark = CombineBufferSize / 4;
        var size = (CombineBufferSize / 3) + 1;
        Write(size);
        Write(size);
        Write(size);

        Assert.Equal(1, Probe.Flushes);
        Assert.Equal("drain", SingleReason());
        Assert.Equal([[0, 1], [2]], ReadBuffers());
        Channel.RunPendingTasks();
        Assert.Equal(1, Probe.Flushes);
        AssertAllSentInOrder();
    }

    [Fact]
    public void Combined_write_tasks_complete_together_when_their_buffer_is_written()
    {
        Start(Settings());
        var first = Write();
        var second = Write();
        Assert.False(first.IsCompleted);

        Channel.RunPendingTasks();

        Assert.True(first.IsCompletedSuccessfully);
        Assert.True(second.IsCompletedSuccessfully);
        AssertAllSentInOrder();
    }

    [Fact]
    public void A_channel_that_goes_inactive_with_a_partly_filled_combine_buffer_releases_it_and_fails_its_writes()
    {
        Start(Settings());
        var first = Write();
        var second = Write();

        Channel.Pipeline.FireChannelInactive();

        Assert.True(first.IsFaulted);
        Assert.True(second.IsFaulted);
        Assert.IsType<ClosedChannelException>(first.Exception!.InnerException);
        Assert.Equal(0, Probe.Flushes);
        Assert.Empty(ReadBuffers()); // nothing reached the socket end; the leak check at the end finds nothing held
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Combined_writes_fail_or_are_canceled_with_their_combine_buffer_s_write(bool canceled)
    {
        var channel = new EmbeddedChannel(new RefusingWrites(canceled), new BatchingWriterHandler(Settings()));
        var first = channel.WriteAsync(Buffer(8, 0));
        var second = channel.WriteAsync(Buffer(8, 1));

        channel.RunPendingTasks();

        foreach (var written in new[] { first, second })
        {
            if (canceled)
            {
                Assert.True(written.IsCanceled);
            }
            else
            {
                Assert.Equal("refused", Assert.IsType<IOException>(written.Exception!.InnerException).Message);
            }
        }

        channel.FinishAndReleaseAll();
    }

    [Fact]
    public void Removal_with_a_partly_filled_combine_buffer_sends_it_first()
    {
        Start(Settings());
        WriteMany(3);
        Channel.Pipeline.Remove<BatchingWriterHandler>();

        Assert.Equal([[0, 1, 2]], ReadBuffers());
        Assert.Equal(1, Probe.Flushes);
        AssertAllSentInOrder();
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(BatchingWriterHandler.MaxCombineBufferSize + 1)]
    public void A_combine_buffer_size_out_of_range_is_refused(int size) =>
        Assert.Throws<ArgumentOutOfRangeException>(() => new BatchingWriterHandler(Settings(), size, TimeProvider.System, FlushBatchingMetrics.Shared));

    // The socket end refusing every write, as a failed socket write would.
    private sealed class RefusingWrites(bool cancel) : ChannelHandlerAdapter
    {
        public override Task WriteAsync(IChannelHandlerContext context, object message)
        {
            ReferenceCountUtil.Release(message);
            return cancel ? Task.FromCanceled(new CancellationToken(canceled: true)) : Task.FromException(new IOException("refused"));
        }
    }
}
