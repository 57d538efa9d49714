using System.Net.Sockets;
using System.Threading.Tasks.Sources;

namespace FlushBatching.Tcp.Io;

/// <summary>
/// One reusable <see cref="SocketAsyncEventArgs"/> that sends a list of frames in one gathered send and can be
/// awaited with no allocation, as Kestrel's <c>SocketSender</c> does. Used by one send loop at a time.
/// </summary>
internal sealed class SocketSender : SocketAsyncEventArgs, IValueTaskSource<int>
{
    private ManualResetValueTaskSourceCore<int> _source;

    public SocketSender()
        : base(unsafeSuppressExecutionContextFlow: true)
    {
    }

    public ValueTask<int> SendAsync(Socket socket, List<ArraySegment<byte>> frames)
    {
        _source.Reset();
        if (frames.Count == 1)
        {
            if (BufferList is not null)
            {
                BufferList = null;
            }

            SetBuffer(frames[0].AsMemory());
        }
        else
        {
            if (Buffer is not null || MemoryBuffer.Length != 0)
            {
                SetBuffer(null, 0, 0);
            }

            BufferList = frames;
        }

        if (socket.SendAsync(this))
        {
            return new ValueTask<int>(this, _source.Version);
        }

        return SocketError == SocketError.Success
            ? new ValueTask<int>(BytesTransferred)
            : ValueTask.FromException<int>(new SocketException((int)SocketError));
    }

    protected override void OnCompleted(SocketAsyncEventArgs e)
    {
        if (SocketError == SocketError.Success)
        {
            _source.SetResult(BytesTransferred);
        }
        else
        {
            _source.SetException(new SocketException((int)SocketError));
        }
    }

    int IValueTaskSource<int>.GetResult(short token) => _source.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource<int>.GetStatus(short token) => _source.GetStatus(token);

    void IValueTaskSource<int>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _source.OnCompleted(continuation, state, token, flags);
}
