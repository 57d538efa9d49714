using FlushBatching.DotNetty.Tests.Support;

namespace FlushBatching.DotNetty.Tests;

/// <summary>
/// The one leak the handler's tests leave to DotNetty: its TLS read buffer, lent to SslStream and never touched again.
/// The reports are DotNetty's format, their frames as seen in a run of this project.
/// </summary>
public sealed class LeakDetectionTests
{
    private const string Header = "LEAK: IByteBuffer.Release() was not called before it's garbage-collected.\nRecent access records: \n";

    private const string LentToSslStream = """
        #1:
           at System.Environment.get_StackTrace()
           at DotNetty.Buffers.AdvancedLeakAwareByteBuffer.GetIoBuffer(Int32 index, Int32 length)
           at DotNetty.Handlers.Tls.TlsHandler.ReadFromSslStreamAsync(IByteBuffer outputBuffer, Int32 outputBufferLength)
           at DotNetty.Handlers.Tls.TlsHandler.Unwrap(IChannelHandlerContext ctx, IByteBuffer packet, Int32 offset, Int32 length, List`1 packetInfos, List`1 output)

        """;

    // The same record with the buffer's own frame inlined, as another run's JIT left it.
    private const string LentToSslStreamInlined = """
        #1:
           at System.Environment.get_StackTrace()
           at DotNetty.Common.ResourceLeakDetector.DefaultResourceLeak.Record0(Object hint)
           at DotNetty.Handlers.Tls.TlsHandler.ReadFromSslStreamAsync(IByteBuffer outputBuffer, Int32 outputBufferLength)
           at DotNetty.Handlers.Tls.TlsHandler.Unwrap(IChannelHandlerContext ctx, IByteBuffer packet, Int32 offset, Int32 length, List`1 packetInfos, List`1 output)

        """;

    private const string ReadByADecoder = """
        #2:
           at System.Environment.get_StackTrace()
           at DotNetty.Buffers.AdvancedLeakAwareByteBuffer.SetWriterIndex(Int32 writerIndex)
           at DotNetty.Handlers.Tls.TlsHandler.AddBufferToOutput(IByteBuffer outputBuffer, Int32 length, List`1 output)

        """;

    private const string CreatedInUnwrap = """
        Created at:
           at System.Environment.get_StackTrace()
           at DotNetty.Buffers.AbstractByteBufferAllocator.ToLeakAwareBuffer(IByteBuffer buf)
           at DotNetty.Handlers.Tls.TlsHandler.Unwrap(IChannelHandlerContext ctx, IByteBuffer packet, Int32 offset, Int32 length, List`1 packetInfos, List`1 output)
        """;

    private const string CreatedInTheHandler = """
        Created at:
           at System.Environment.get_StackTrace()
           at DotNetty.Buffers.AbstractByteBufferAllocator.ToLeakAwareBuffer(IByteBuffer buf)
           at FlushBatching.DotNetty.BatchingWriterHandler.Write(IChannelHandlerContext context, Object message, IPromise promise)
        """;

    [Theory]
    [InlineData(LentToSslStream)]
    [InlineData(LentToSslStreamInlined)]
    public void TlsHandlers_read_buffer_lent_to_SslStream_and_never_touched_again_is_DotNettys(string record)
    {
        Assert.True(LeakDetection.IsTlsHandlersPendingRead(Header + record + CreatedInUnwrap));
    }

    [Fact]
    public void A_TLS_read_buffer_that_reached_the_pipeline_is_a_leak_of_the_tests_own()
    {
        Assert.False(LeakDetection.IsTlsHandlersPendingRead(Header + ReadByADecoder + LentToSslStream + CreatedInUnwrap));
    }

    [Fact]
    public void A_buffer_lent_to_SslStream_but_created_elsewhere_is_a_leak_of_the_tests_own()
    {
        Assert.False(LeakDetection.IsTlsHandlersPendingRead(Header + LentToSslStream + CreatedInTheHandler));
    }

    [Fact]
    public void A_report_without_access_records_is_a_leak_of_the_tests_own()
    {
        Assert.False(LeakDetection.IsTlsHandlersPendingRead(Header + CreatedInUnwrap));
    }
}
