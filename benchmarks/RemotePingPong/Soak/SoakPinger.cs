using System.Runtime.CompilerServices;
using Akka.Actor;

namespace RemotePingPong.Soak;

/// <summary>Keeps <see cref="PingPongRun.InFlight"/> messages in flight against its echo until its system stops, counting each that comes back.</summary>
public sealed class SoakPinger : UntypedActor
{
    /// <summary>Tells a pinger to begin.</summary>
    public static readonly object Begin = new();

    private readonly IActorRef _echo;
    private readonly byte[] _payload;
    private readonly StrongBox<long> _received;

    public SoakPinger(IActorRef echo, int payloadBytes, StrongBox<long> received)
    {
        _echo = echo;
        _payload = new byte[payloadBytes];
        _received = received;
    }

    protected override void OnReceive(object message)
    {
        if (ReferenceEquals(message, Begin))
        {
            for (var i = 0; i < PingPongRun.InFlight; i++)
            {
                _echo.Tell(_payload);
            }

            return;
        }

        Interlocked.Increment(ref _received.Value);
        _echo.Tell(_payload);
    }
}
