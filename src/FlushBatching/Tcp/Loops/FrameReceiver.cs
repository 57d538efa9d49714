using System.IO.Pipelines;
using FlushBatching.Framing;
using FlushBatching.Tcp.Io;

namespace FlushBatching.Tcp.Loops;

/// <summary>
/// A connection's inbound side: one loop receives from the peer into a <see cref="Pipe"/>, another cuts frames from
/// the pipe and delivers them to the handler. Until a handler is given, frames wait in the pipe, and once it is full,
/// TCP flow control pushes back on the peer.
/// </summary>
internal sealed class FrameReceiver
{
    /// <summary>
    /// A connection whose last wait for bytes took longer than this waits for the next ones with an empty buffer, so
    /// an idle connection (an Akka association between heartbeats) holds no receive buffer. A busy one receives
    /// straight into the pipe: waiting without a buffer first costs a receive more, and before every receive it cost
    /// 5–9% of the throughput at 10 clients. A connection quiet by this measure receives at most ten times a second,
    /// where that receive more does not show.
    /// </summary>
    internal static readonly TimeSpan QuietAfter = TimeSpan.FromMilliseconds(100);

    private readonly ConnectionIo _io;
    private readonly ConnectionSettings _settings;
    private readonly Pipe _input;
    private Action? _heard;

    // Set by Cancel: frames are no longer delivered, even those already in the buffer being read.
    private volatile bool _stopped;

    /// <param name="io">What receives from the peer.</param>
    /// <param name="settings">The connection's settings.</param>
    /// <param name="heard">Called once, when the first bytes arrive, before any handler may read them.</param>
    public FrameReceiver(ConnectionIo io, ConnectionSettings settings, Action? heard = null)
    {
        _io = io;
        _settings = settings;
        _heard = heard;

        // What a connection whose handler has not started holds before TCP pushes back on the peer. A frame larger
        // than this still completes (the pipe lets the writer on once the reader has examined everything it holds);
        // two whole frames keep a large frame's receive from pausing and resuming every few reads.
        var pause = Math.Max(2L * settings.Framing.MaximumFrameSize, 1024 * 1024);
        _input = new Pipe(new PipeOptions(
            pauseWriterThreshold: pause,
            resumeWriterThreshold: pause / 2,
            minimumSegmentSize: 16 * 1024,
            readerScheduler: PipeScheduler.Inline,
            writerScheduler: PipeScheduler.Inline,
            useSynchronizationContext: false));
    }

    /// <summary>
    /// Stops <see cref="DeliverToHandlerAsync"/> at its next look, and <see cref="ReceiveFromPeerAsync"/> where it waits for
    /// room in a pipe nobody reads (a connection whose handler never started, with more than the pause threshold
    /// received): closing the socket alone would not end that wait, and the connection would never complete.
    /// </summary>
    public void Cancel()
    {
        _stopped = true;
        _input.Reader.CancelPendingRead();
        _input.Writer.CancelPendingFlush();
    }

    /// <summary>
    /// Receives from the peer into the pipe until the peer ends its side (returns <c>null</c>) or receiving fails
    /// (returns the error). Either way the pipe is completed, so delivery ends after the last whole frame.
    /// </summary>
    public async Task<Exception?> ReceiveFromPeerAsync()
    {
        await Task.Yield();
        var writer = _input.Writer;
        var clock = _settings.TimeProvider;
        var quiet = false;
        Exception? error = null;
        try
        {
            while (true)
            {
                // A peer that closed its side makes the empty wait return, and the receive after it return 0.
                var waitStarted = clock.GetTimestamp();
                if (quiet)
                {
                    await _io.ReceiveAsync(Memory<byte>.Empty).ConfigureAwait(false);
                }

                var received = await _io.ReceiveAsync(writer.GetMemory()).ConfigureAwait(false);
                if (received == 0)
                {
                    break;
                }

                quiet = clock.GetElapsedTime(waitStarted) > QuietAfter;
                if (_heard is { } heard)
                {
                    _heard = null;
                    heard();
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
        return error;
    }

    /// <summary>
    /// Delivers every whole frame to <paramref name="handler"/> in order until the peer's stream ends, delivery is
    /// cancelled or the connection ends; returns what ended it: <c>null</c> for an orderly end, the
    /// handler's exception, or an <see cref="InvalidFrameException"/> for a bad frame.
    /// </summary>
    public async Task<Exception?> DeliverToHandlerAsync(FramedConnection connection, IFrameHandler handler)
    {
        var reader = _input.Reader;
        var framing = _settings.Framing;
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
                    while (!_stopped && FrameDecoder.TryReadFrame(ref buffer, framing, out var payload))
                    {
                        frames++;
                        bytes += payload.Length;
                        handler.OnFrame(connection, payload);
                    }

                    if (result.IsCanceled || _stopped)
                    {
                        break;
                    }

                    if (result.IsCompleted)
                    {
                        if (!buffer.IsEmpty)
                        {
                            throw InvalidFrameException.EndedInsideFrame(buffer.Length);
                        }

                        break;
                    }
                }
                finally
                {
                    reader.AdvanceTo(buffer.Start, buffer.End);
                    _settings.Metrics.RecordReceived(frames, bytes);
                }
            }
        }
        catch (Exception e)
        {
            error = e;
        }

        await reader.CompleteAsync().ConfigureAwait(false);
        return error;
    }
}
