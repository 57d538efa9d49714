namespace FlushBatching.DotNetty.Tests;

/// <summary>The handler suite with write combining off, and what is particular to it.</summary>
public sealed class BatchingWriterHandlerWithoutCombiningTests : BatchingWriterHandlerSuite
{
    protected override int CombineBufferSize => 0;

    [Fact]
    public void Every_write_reaches_the_socket_end_as_its_own_buffer()
    {
        Start(Settings());
        WriteMany(5);
        Channel.RunPendingTasks();

        Assert.Equal([[0], [1], [2], [3], [4]], ReadBuffers());
        AssertAllSentInOrder();
    }
}
