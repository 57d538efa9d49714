using System.Diagnostics;
using Akka.Actor;

namespace RemotePingPong;

/// <summary>
/// Keeps <c>inFlight</c> messages in flight against its echo until <c>messages</c> have come back; with one in flight
/// it records each round trip's time.
/// </summary>
public sealed class PingClient : UntypedActor
{
    /// <summary>Tells a client to begin.</summary>
    public static readonly object Begin = new();

    private readonly IActorRef _echo;
    private readonly int _messages;
    private readonly int _inFlight;
    private readonly byte[] _payload;
    private readonly TaskCompletionSource _done;
    private readonly long[]? _roundTripTicks;
    private int _sent;
    private int _received;
    private long _sentAt;

    public PingClient(IActorRef echo, int messages, int inFlight, int payloadBytes, TaskCompletionSource done, long[]? roundTripTicks)
    {
        _echo = echo;
        _messages = messages;
        _inFlight = inFlight;
        _payload = new byte[payloadBytes];
        _done = done;
        _roundTripTicks = roundTripTicks;
    }

    protected override void OnReceive(object message)
    {
        if (ReferenceEquals(message, Begin))
        {
            for (var i = 0; i < Math.Min(_inFlight, _messages); i++)
            {
                Send();
            }

            return;
        }

        if (_roundTripTicks is not null)
        {
            _roundTripTicks[_received] = Stopwatch.GetTimestamp() - _sentAt;
        }

        if (++_received == _messages)
        {
            _done.TrySetResult();
        }
        else if (_sent < _messages)
        {
            Send();
        }
    }

    private void Send()
    {
        _sent++;
        _sentAt = Stopwatch.GetTimestamp();
        _echo.Tell(_payload);
    }
}
