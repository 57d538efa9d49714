using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Runtime.CompilerServices;
using System.Net.Sockets;
using System.Threading.Tasks.Sources;
using FlushBatching.Batching;
using FlushBatching.Framing;

namespace FlushBatching.Tcp;

/// <summary>
/// A TCP connection that carries length-prefixed frames and batches its writes: <see cref="TryWrite"/> from
/// any thread appends a frame to a queue, and one send loop sends whatever is queued in gathered sends,
/// flushing by count, bytes, time, or the moment the burst ends.
/// </summary>
/// <remarks>
/// <para>
/// Writes: under a short lock, each frame (prefix and payload together, one copy of the payload) is appended
/// to the connection's current pooled chunk and queued. Only a write that finds the send loop parked wakes it,
/// so a burst of writes costs one wake-up, no Task, no allocation and no syscall per message. The send loop
/// takes the whole queue at once and applies the <see cref="FlushPolicy"/>; frames side by side in a chunk go
/// out as one segment, so a batch is usually one single-buffer send. When the queue is empty it flushes what it
/// holds (burst end) and parks.
/// </para>
/// <para>
/// Reads: a receive loop fills a <see cref="Pipe"/>; frames are cut from it and handed to the
/// <see cref="IFrameHandler"/> given to <see cref="Start"/>. Until then inbound frames wait, and TCP flow
/// control pushes back on the peer.
/// </para>
/// <para>
/// Every ending (local close or abort, the peer closing, a socket error, a bad frame) goes through one
/// shutdown path; the handler hears of it once, after the last frame.
/// </para>
/// </remarks>
public sealed class FramedConnection : IAsyncDisposable
{
    private static readonly TimeSpan GracefulCloseTimeout = TimeSpan.FromSeconds(2);

    // Frames are appended to pooled chunks of this size; a larger frame gets a buffer of its own. Few chunks are
    // out at once, so the pool serves them from its caches, where one buffer per frame would miss under load.
    private const int ChunkSize = 32 * 1024;

    private readonly ConnectionIo _io;
    private readonly ConnectionSettings _settings;
    private readonly FramingSettings _framing;
    private readonly ArrayPool<byte> _pool;
    private readonly FlushPolicy _policy;
    private readonly Pipe _input;
    private readonly SendSignal _signal = new();
    private readonly object _lock = new();
    private readonly List<ArraySegment<byte>> _batch = [];
    private readonly List<ArraySegment<byte>> _sendList = [];
    private readonly TaskCompletionSource _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Task _receiveLoop;
    private readonly Task _sendLoop;

    // Guarded by _lock.
    private List<ArraySegment<byte>> _queue = [];
    private List<ArraySegment<byte>> _draining = [];
    private long _unsentBytes;
    private bool _parked;
    private bool _closeRequested;
    private bool _closed;
    private TaskCompletionSource? _writableWaiter;
    private byte[]? _chunk;
    private int _chunkUsed;

    // Touched by the send loop alone: the chunk of the last frame sent, returned once a later chunk is reached.
    private byte[]? _sentChunk;

    private volatile bool _writable = true;
    private IFrameHandler? _handler;
    private int _shutdown;
    private Exception? _closeReason;

    // Written by the send loop or the read loop alone; read through Statistics.
    private long _framesSent;
    private long _bytesSent;
    private long _sends;
    private long _framesReceived;
    private long _bytesReceived;
    private readonly long[] _flushes = new long[Enum.GetValues<FlushReason>().Length];

    internal FramedConnection(Socket socket, ConnectionIo io, ConnectionSettings settings)
    {
        _io = io;
        _settings = settings;
        _framing = settings.Framing;
        _pool = settings.BufferPool;
        _policy = new FlushPolicy(settings.Batching, settings.TimeProvider);
        LocalEndPoint = (IPEndPoint)socket.LocalEndPoint!;
        RemoteEndPoint = (IPEndPoint)socket.RemoteEndPoint!;

        // The pipe must hold two whole frames before it stops reading, or a frame larger than the pause
        // threshold could never complete.
        var pause = Math.Max(2L * _framing.MaximumFrameSize, 1024 * 1024);
        _input = new Pipe(new PipeOptions(
            pauseWriterThreshold: pause,
            resumeWriterThreshold: pause / 2,
            minimumSegmentSize: 16 * 1024,
            readerScheduler: PipeScheduler.Inline,
            writerScheduler: PipeScheduler.Inline,
            useSynchronizationContext: false));

        _receiveLoop = ReceiveLoopAsync();
        _sendLoop = SendLoopAsync();
    }

    /// <summary>The local end of the connection.</summary>
    public IPEndPoint LocalEndPoint { get; }

    /// <summary>The remote end of the connection.</summary>
    public IPEndPoint RemoteEndPoint { get; }

    /// <summary>The settings the connection was made with.</summary>
    public ConnectionSettings Settings => _settings;

    /// <summary>
    /// Whether <see cref="TryWrite"/> takes writes: <c>false</c> from when unsent bytes pass
    /// <see cref="ConnectionSettings.WriteBufferHighWaterMark"/> until they fall to the low-water mark, and
    /// after the connection is closing.
    /// </summary>
    public bool IsWritable => _writable;

    /// <summary>Bytes written but not yet handed to the socket.</summary>
    public long UnsentBytes
    {
        get
        {
            lock (_lock)
            {
                return _unsentBytes;
            }
        }
    }

    /// <summary>Completes when the connection has ended and its socket is released.</summary>
    public Task Completion => _completion.Task;

    /// <summary>What ended the connection: <c>null</c> while open and after an orderly close.</summary>
    public Exception? CloseReason => Volatile.Read(ref _closeReason);

    /// <summary>A snapshot of this connection's counters.</summary>
    public ConnectionStatistics Statistics => new()
    {
        FramesSent = Interlocked.Read(ref _framesSent),
        BytesSent = Interlocked.Read(ref _bytesSent),
        Sends = Interlocked.Read(ref _sends),
        FramesReceived = Interlocked.Read(ref _framesReceived),
        BytesReceived = Interlocked.Read(ref _bytesReceived),
        CountFlushes = Interlocked.Read(ref _flushes[(int)FlushReason.Count]),
        BytesFlushes = Interlocked.Read(ref _flushes[(int)FlushReason.Bytes]),
        IntervalFlushes = Interlocked.Read(ref _flushes[(int)FlushReason.Interval]),
        BurstEndFlushes = Interlocked.Read(ref _flushes[(int)FlushReason.BurstEnd]),
        UnbatchedFlushes = Interlocked.Read(ref _flushes[(int)FlushReason.Unbatched]),
    };

    /// <summary>
    /// Queues one frame carrying <paramref name="payload"/>. Thread-safe, never blocks, and keeps the order of
    /// writes made from one thread (and of writes ordered by the caller across threads).
    /// </summary>
    /// <returns>
    /// <c>true</c> when the frame is queued; <c>false</c> when the connection is above its high-water mark or
    /// closing, and nothing was queued: try again later (see <see cref="WhenWritableAsync"/>).
    /// </returns>
    /// <exception cref="ArgumentException">The payload does not fit in a frame; the message names its size and the limit.</exception>
    public bool TryWrite(ReadOnlySpan<byte> payload)
    {
        FrameEncoder.EnsurePayloadFits(payload.Length, _framing);
        if (!_writable)
        {
            return Refuse();
        }

        var length = payload.Length + FramingSettings.HeaderLength;
        bool wake;
        lock (_lock)
        {
            if (!_writable)
            {
                return Refuse();
            }

            var frame = Reserve(length);
            FrameEncoder.WriteHeader(frame, payload.Length, _framing.ByteOrder);
            payload.CopyTo(frame.AsSpan(FramingSettings.HeaderLength));
            _queue.Add(frame);
            _unsentBytes += length;
            if (_unsentBytes > _settings.WriteBufferHighWaterMark)
            {
                _writable = false;
            }

            wake = _parked;
            _parked = false;
        }

        if (wake)
        {
            WakeSendLoop();
        }

        return true;
    }

    // A refusal is back-pressure unless the connection is closing; only back-pressure is counted.
    private bool Refuse()
    {
        if (!Volatile.Read(ref _closeRequested) && !Volatile.Read(ref _closed))
        {
            _settings.Metrics.RecordRefused();
        }

        return false;
    }

    // Under _lock: room for one frame, at the end of the current chunk or in a new buffer. Frames fill chunks
    // strictly in order, which is what lets the send loop return a chunk once it has sent past it.
    private ArraySegment<byte> Reserve(int length)
    {
        if (_chunk is null || ChunkSize - _chunkUsed < length)
        {
            _chunk = _pool.Rent(Math.Max(length, ChunkSize));
            _chunkUsed = 0;
        }

        var frame = new ArraySegment<byte>(_chunk, _chunkUsed, length);
        _chunkUsed = length > ChunkSize ? ChunkSize : _chunkUsed + length;
        return frame;
    }

    /// <summary>Completes when <see cref="TryWrite"/> takes writes again, or the connection has ended.</summary>
    public Task WhenWritableAsync(CancellationToken cancellationToken = default)
    {
        Task task;
        lock (_lock)
        {
            if (_writable || _closed || _closeRequested)
            {
                return Task.CompletedTask;
            }

            _writableWaiter ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            task = _writableWaiter.Task;
        }

        return task.WaitAsync(cancellationToken);
    }

    /// <summary>
    /// Starts delivering inbound frames to <paramref name="handler"/>, in order, beginning with any that
    /// arrived before this call; then <see cref="IFrameHandler.OnClosed"/> once when the connection ends.
    /// </summary>
    /// <exception cref="InvalidOperationException">A handler was already registered.</exception>
    public void Start(IFrameHandler handler)
    {
        ArgumentNullException.ThrowIfNull(handler);
        if (Interlocked.CompareExchange(ref _handler, handler, null) is not null)
        {
            throw new InvalidOperationException("This connection already has a frame handler.");
        }

        _ = Task.Run(() => ReadLoopAsync(handler));
    }

    /// <summary>
    /// Sends everything already written, then closes: our side ends the stream and waits up to 2 seconds
    /// for the peer to end its own, so the peer reads every byte. Writes after this call are refused.
    /// </summary>
    /// <returns><see cref="Completion"/>.</returns>
    public Task CloseAsync()
    {
        bool wake;
        lock (_lock)
        {
            if (_closeRequested || _closed)
            {
                return Completion;
            }

            _closeRequested = true;
            _writable = false;
            wake = _parked;
            _parked = false;
        }

        if (wake)
        {
            WakeSendLoop();
        }

        return Completion;
    }

    /// <summary>Closes at once: frames not yet sent are dropped and their buffers returned.</summary>
    /// <param name="reason">What the handler is told ended the connection; <c>null</c> for an orderly end.</param>
    public void Abort(Exception? reason = null) => Shutdown(reason);

    /// <summary>Aborts the connection and waits until its socket is released.</summary>
    public async ValueTask DisposeAsync()
    {
        Abort();
        await Completion.ConfigureAwait(false);
    }

    /// <inheritdoc />
    public override string ToString() => $"{LocalEndPoint} -> {RemoteEndPoint}";

    private void WakeSendLoop()
    {
        if (_settings.SendScheduler is { } scheduler)
        {
            scheduler.Schedule(SendSignal.Set, _signal);
        }
        else
        {
            ThreadPool.UnsafeQueueUserWorkItem(_signal, preferLocal: false);
        }
    }

    private async Task SendLoopAsync()
    {
        Exception? error = null;
        try
        {
            while (true)
            {
                List<ArraySegment<byte>>? frames = null;
                var park = false;
                lock (_lock)
                {
                    if (_closed)
                    {
                        break;
                    }

                    if (_queue.Count > 0)
                    {
                        frames = _queue;
                        _queue = _draining;
                        _draining = frames;
                    }
                    else if (!_policy.HasPending)
                    {
                        if (_closeRequested)
                        {
                            break;
                        }

                        _signal.Reset();
                        _parked = park = true;
                    }
                }

                if (park)
                {
                    await _signal.WaitAsync().ConfigureAwait(false);
                }
                else if (frames is null)
                {
                    // Nothing more is queued: the policy decides the burst has ended.
                    if (_policy.OnBurstEnd() is var reason and not FlushReason.None)
                    {
                        await FlushAsync(reason).ConfigureAwait(false);
                    }
                }
                else
                {
                    await GatherAsync(frames).ConfigureAwait(false);
                }
            }

            if (Volatile.Read(ref _closeRequested) && !Volatile.Read(ref _closed))
            {
                await _io.ShutdownSendAsync().ConfigureAwait(false);
                await Task.WhenAny(_receiveLoop, Task.Delay(GracefulCloseTimeout)).ConfigureAwait(false);
                Shutdown(null);
            }
        }
        catch (Exception e)
        {
            error = e;
        }
        finally
        {
            ReturnUnsentBuffers();
        }

        if (error is not null)
        {
            Shutdown(error);
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask GatherAsync(List<ArraySegment<byte>> frames)
    {
        for (var i = 0; i < frames.Count; i++)
        {
            var frame = frames[i];
            frames[i] = default;
            _batch.Add(frame);
            var reason = _policy.OnWrite(frame.Count);
            if (reason != FlushReason.None)
            {
                await FlushAsync(reason).ConfigureAwait(false);
            }
        }

        frames.Clear();
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask FlushAsync(FlushReason reason)
    {
        var frames = _batch.Count;
        var bytes = _policy.PendingBytes;

        // Counted before the send, so that a peer that has read every frame also sees final counters.
        Interlocked.Add(ref _framesSent, frames);
        Interlocked.Add(ref _bytesSent, bytes);
        Interlocked.Increment(ref _sends);
        Interlocked.Increment(ref _flushes[(int)reason]);
        _settings.Metrics.RecordSend(frames, bytes, reason);

        // Frames written one after another sit side by side in a chunk: one segment each run, so a batch is
        // usually a single-buffer send.
        foreach (var frame in _batch)
        {
            var last = _sendList.Count - 1;
            if (last >= 0 && _sendList[last].Array == frame.Array && _sendList[last].Offset + _sendList[last].Count == frame.Offset)
            {
                _sendList[last] = new ArraySegment<byte>(frame.Array!, _sendList[last].Offset, _sendList[last].Count + frame.Count);
            }
            else
            {
                _sendList.Add(frame);
            }
        }

        await _io.SendAsync(_sendList, bytes).ConfigureAwait(false);

        foreach (var segment in _sendList)
        {
            MovePastChunk(segment.Array!);
        }

        _sendList.Clear();
        _batch.Clear();
        _policy.OnFlushed();

        TaskCompletionSource? waiter = null;
        lock (_lock)
        {
            _unsentBytes -= bytes;
            if (!_writable && !_closeRequested && !_closed && _unsentBytes <= _settings.WriteBufferLowWaterMark)
            {
                _writable = true;
                waiter = _writableWaiter;
                _writableWaiter = null;
            }
        }

        waiter?.TrySetResult();
    }

    // Once the send loop ends: every chunk still held goes back to the pool, each once.
    private void ReturnUnsentBuffers()
    {
        TaskCompletionSource? waiter;
        byte[]? current;
        lock (_lock)
        {
            _closed = true;
            _writable = false;
            ReturnPassedChunks(_batch);
            ReturnPassedChunks(_draining);
            ReturnPassedChunks(_queue);
            current = _chunk;
            _chunk = null;
            waiter = _writableWaiter;
            _writableWaiter = null;
        }

        if (current is not null)
        {
            MovePastChunk(current);
        }

        ReturnSentChunk();
        _sendList.Clear();
        _policy.OnFlushed();
        waiter?.TrySetResult();
    }

    private void ReturnPassedChunks(List<ArraySegment<byte>> frames)
    {
        foreach (var frame in frames)
        {
            if (frame.Array is not null)
            {
                MovePastChunk(frame.Array);
            }
        }

        frames.Clear();
    }

    // Send loop only: `chunk` holds the next frame in write order. Chunks fill strictly in order, so reaching a
    // new one means every frame of the one before is done with, and it goes back to the pool.
    private void MovePastChunk(byte[] chunk)
    {
        if (chunk != _sentChunk)
        {
            ReturnSentChunk();
            _sentChunk = chunk;
        }
    }

    private void ReturnSentChunk()
    {
        if (_sentChunk is not null)
        {
            _pool.Return(_sentChunk);
            _sentChunk = null;
        }
    }

    private async Task ReceiveLoopAsync()
    {
        await Task.Yield();
        var writer = _input.Writer;
        Exception? error = null;
        try
        {
            while (true)
            {
                var received = await _io.ReceiveAsync(writer.GetMemory()).ConfigureAwait(false);
                if (received == 0)
                {
                    break;
                }

                writer.Advance(received);
                var flushed = await writer.FlushAsync().ConfigureAwait(false);
                if (flushed.IsCompleted || flushed.IsCanceled)
                {
                    break;
                }
            }
        }
        catch (Exception e)
        {
            error = e;
        }

        await writer.CompleteAsync(error).ConfigureAwait(false);

        // An error loses what is buffered anyway, so it ends the connection now, handler or not; a clean end of
        // stream waits for the handler to read every frame before it.
        if (error is not null)
        {
            Shutdown(error);
        }
    }

    private async Task ReadLoopAsync(IFrameHandler handler)
    {
        var reader = _input.Reader;
        Exception? error = null;
        try
        {
            while (true)
            {
                var result = await reader.ReadAsync().ConfigureAwait(false);
                var buffer = result.Buffer;
                long frames = 0;
                long bytes = 0;
                try
                {
                    while (Volatile.Read(ref _shutdown) == 0 && FrameDecoder.TryReadFrame(ref buffer, _framing, out var payload))
                    {
                        frames++;
                        bytes += payload.Length;
                        handler.OnFrame(this, payload);
                    }

                    if (result.IsCanceled || Volatile.Read(ref _shutdown) != 0)
                    {
                        break;
                    }

                    if (result.IsCompleted)
                    {
                        if (!buffer.IsEmpty)
                        {
                            throw new InvalidFrameException($"The peer closed the connection inside a frame: {buffer.Length} bytes of an unfinished frame were left.");
                        }

                        break;
                    }
                }
                finally
                {
                    reader.AdvanceTo(buffer.Start, buffer.End);
                    Interlocked.Add(ref _framesReceived, frames);
                    Interlocked.Add(ref _bytesReceived, bytes);
                    _settings.Metrics.RecordReceived(frames, bytes);
                }
            }
        }
        catch (Exception e)
        {
            error = e;
        }

        await reader.CompleteAsync().ConfigureAwait(false);
        Shutdown(error);
        await Completion.ConfigureAwait(false);
        handler.OnClosed(this, CloseReason);
    }

    // The one way a connection ends. The first reason wins; every later call is a no-op.
    private void Shutdown(Exception? reason)
    {
        if (Interlocked.Exchange(ref _shutdown, 1) != 0)
        {
            return;
        }

        Volatile.Write(ref _closeReason, reason);
        lock (_lock)
        {
            _closed = true;
            _writable = false;
            _parked = false;
        }

        _io.Dispose();
        _input.Reader.CancelPendingRead();

        // Always, and not through SendScheduler: a wake already queued there may never run, and an ending must
        // not wait on that seam. A second wake for the same park is ignored.
        ThreadPool.UnsafeQueueUserWorkItem(_signal, preferLocal: false);

        _ = CompleteWhenLoopsEndAsync();
    }

    // The loops report their own errors through Shutdown; here only their end matters, and no exception may be
    // left to surface as an unobserved task exception.
    private async Task CompleteWhenLoopsEndAsync()
    {
        await Task.WhenAll(_sendLoop, _receiveLoop).ContinueWith(static _ => { }, TaskScheduler.Default).ConfigureAwait(false);
        _completion.TrySetResult();
    }

    /// <summary>The send loop's wake-up: awaitable with no allocation, and a thread-pool work item that completes it.</summary>
    private sealed class SendSignal : IValueTaskSource, IThreadPoolWorkItem
    {
        public static readonly Action<object?> Set = static state => ((SendSignal)state!).Execute();

        private ManualResetValueTaskSourceCore<bool> _source;
        private int _set;

        // Called by the send loop, under the connection's lock, just before it parks.
        public void Reset()
        {
            _source.Reset();
            Volatile.Write(ref _set, 0);
        }

        public ValueTask WaitAsync() => new(this, _source.Version);

        // Any number of wakes may race for one park; the first completes it, the rest do nothing.
        public void Execute()
        {
            if (Interlocked.Exchange(ref _set, 1) == 0)
            {
                _source.SetResult(true);
            }
        }

        void IValueTaskSource.GetResult(short token) => _source.GetResult(token);

        ValueTaskSourceStatus IValueTaskSource.GetStatus(short token) => _source.GetStatus(token);

        void IValueTaskSource.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
            _source.OnCompleted(continuation, state, token, flags);
    }
}
