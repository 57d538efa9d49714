using System.Buffers;
using FlushBatching.Diagnostics;
using FlushBatching.Tcp;
using FlushBatching.Tests.Support;

namespace FlushBatching.Tests.Tcp;

public class BackPressureTests
{
    [Fact]
    public async Task A_reader_that_stops_turns_writes_away_with_bounded_memory_until_it_reads_again()
    {
        const long high = 256 * 1024;
        const long low = 128 * 1024;
        using var metrics = new FlushBatchingMetrics();
        using var recorder = new MeterRecorder(metrics);
        var settings = ConnectionSettings.Default.WithSendBufferSize(64 * 1024).WithReceiveBufferSize(64 * 1024).WithWriteBufferWaterMarks(high, low).WithMetrics(metrics);
        await using var loopback = Loopback.Listen(settings);
        var (client, server) = await loopback.ConnectAsync(settings);
        using var gate = new ManualResetEventSlim(false);
        var reader = new GatedReader(gate);
        server.Start(reader);

        var payload = new byte[16 * 1024];
        var accepted = 0;

        // Write until refused, again and again while the send loop still finds room in the sockets: a loaded machine
        // can run the writer far ahead of the send loop, so the first refusal may come before the sockets are full.
        for (var round = 0; round < 100; round++)
        {
            var acceptedBefore = accepted;
            while (client.TryWrite(payload))
            {
                accepted++;
                Assert.True(client.UnsentBytes <= high + payload.Length + 4, $"{client.UnsentBytes} bytes unsent, above the high-water mark and one frame");
                Assert.True(accepted < 10_000, "160 MB were taken by a connection whose reader has stopped.");
            }

            if (round > 0 && accepted == acceptedBefore)
            {
                break; // refused twice, a pause apart: the sockets are full and the reader still stopped
            }

            await Task.Delay(50);
        }

        Assert.False(client.IsWritable);
        Assert.True(recorder.Sum("flushbatching.writes.refused") >= 2, "every refusal counts on the Meter");
        Assert.True(client.UnsentBytes > low, $"{client.UnsentBytes} bytes unsent while refusing writes; the low-water mark is {low}");
        var whenWritable = client.WhenWritableAsync();
        Assert.False(whenWritable.IsCompleted);

        gate.Set();
        await whenWritable.WaitAsync(FrameCollector.Patience);
        Assert.True(client.UnsentBytes <= low);
        Assert.True(client.TryWrite(payload));
        accepted++;
        await reader.WaitForCountAsync(accepted);
    }

    private sealed class GatedReader(ManualResetEventSlim gate) : IFrameHandler
    {
        private readonly FrameCollector _inner = new();

        public Task WaitForCountAsync(int count) => _inner.WaitForCountAsync(count);

        public void OnFrame(FramedConnection connection, ReadOnlySequence<byte> payload)
        {
            gate.Wait(FrameCollector.Patience);
            _inner.OnFrame(connection, payload);
        }

        public void OnClosed(FramedConnection connection, Exception? reason) => _inner.OnClosed(connection, reason);
    }
}
