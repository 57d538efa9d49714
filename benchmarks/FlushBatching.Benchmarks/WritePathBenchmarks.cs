using System.Buffers;
using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;
using BenchmarkDotNet.Attributes;
using FlushBatching.Tcp;

namespace FlushBatching.Benchmarks;

/// <summary>
/// Sending messages over loopback TCP in bursts, and waiting until the peer has them: the core's write path
/// (<see cref="FramedConnection.TryWrite"/>: one copy into a pooled chunk, batched gathered sends) against the stock
/// way (per message: copy the payload to a new array, a separate 4-byte header, a wrapper and a completion task, and a
/// send syscall). Allocated bytes cover every thread, the peer's reads included.
/// </summary>
[MemoryDiagnoser]
public class WritePathBenchmarks
{
    private const int Messages = 50;

    private byte[] _payload = null!;
    private FramedListener _listener = null!;
    private FramedConnection _client = null!;
    private FrameCounter _received = null!;
    private Socket _stockClient = null!;
    private Socket _stockServer = null!;
    private Thread _stockReader = null!;
    private long _stockBytesRead;
    private long _sentFrames;
    private long _sentStockBytes;

    [Params(16, 200, 1024, 8192)]
    public int PayloadSize { get; set; }

    [Params(1, 10, 50)]
    public int BurstDepth { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _payload = new byte[PayloadSize];
        _received = new FrameCounter();
        var accepted = new TaskCompletionSource<FramedConnection>();
        _listener = FramedListener.Start(new IPEndPoint(IPAddress.Loopback, 0), ConnectionSettings.Default, accepted.SetResult);
        _client = FramedConnector.ConnectAsync(_listener.LocalEndPoint, ConnectionSettings.Default).GetAwaiter().GetResult();
        _client.Start(_received);
        accepted.Task.GetAwaiter().GetResult().Start(_received);

        using var stockListener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        stockListener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        stockListener.Listen();
        _stockClient = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        _stockClient.Connect(stockListener.LocalEndPoint!);
        _stockServer = stockListener.Accept();
        _stockReader = new Thread(ReadStock) { IsBackground = true };
        _stockReader.Start();
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _client.Abort();
        _listener.DisposeAsync().AsTask().GetAwaiter().GetResult();
        _stockClient.Dispose();
        _stockServer.Dispose();
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = Messages)]
    public void StockWay()
    {
        for (var sent = 0; sent < Messages; sent += BurstDepth)
        {
            for (var i = 0; i < BurstDepth; i++)
            {
                var copy = _payload.ToArray();
                var header = new byte[4];
                BinaryPrimitives.WriteInt32LittleEndian(header, copy.Length);
                var message = new WrappedMessage(header, copy, new TaskCompletionSource());
                _stockClient.Send(message.Segments);
                message.Completion.SetResult();
                _sentStockBytes += header.Length + copy.Length;
            }

            SpinUntil(ref _stockBytesRead, _sentStockBytes);
        }
    }

    [Benchmark(OperationsPerInvoke = Messages)]
    public void FlushBatching()
    {
        for (var sent = 0; sent < Messages; sent += BurstDepth)
        {
            for (var i = 0; i < BurstDepth; i++)
            {
                while (!_client.TryWrite(_payload))
                {
                    Thread.Yield();
                }
            }

            _sentFrames += BurstDepth;
            SpinUntil(ref _received.Frames, _sentFrames);
        }
    }

    private static void SpinUntil(ref long counter, long target)
    {
        var spinner = default(SpinWait);
        while (Volatile.Read(ref counter) < target)
        {
            spinner.SpinOnce();
        }
    }

    private void ReadStock()
    {
        var buffer = new byte[64 * 1024];
        try
        {
            int read;
            while ((read = _stockServer.Receive(buffer)) > 0)
            {
                Interlocked.Add(ref _stockBytesRead, read);
            }
        }
        catch (SocketException)
        {
            // closed at cleanup
        }
        catch (ObjectDisposedException)
        {
            // closed at cleanup
        }
    }

    private sealed class WrappedMessage(byte[] header, byte[] payload, TaskCompletionSource completion)
    {
        public List<ArraySegment<byte>> Segments { get; } = [header, payload];

        public TaskCompletionSource Completion { get; } = completion;
    }

    private sealed class FrameCounter : IFrameHandler
    {
        public long Frames;

        public void OnFrame(FramedConnection connection, ReadOnlySequence<byte> payload) => Interlocked.Increment(ref Frames);

        public void OnClosed(FramedConnection connection, Exception? reason)
        {
        }
    }
}
