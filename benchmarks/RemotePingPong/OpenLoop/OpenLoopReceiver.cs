using System.Diagnostics;
using Akka.Actor;
using HdrHistogram;

namespace RemotePingPong.OpenLoop;

/// <summary>
/// Gets one client's replies. Akka keeps order between two actors, so the n-th reply answers the n-th message sent:
/// its latency is now minus the time that message was due, read from the schedule the sender filled in before sending.
/// </summary>
public sealed class OpenLoopReceiver(long[] dueTimestamps, Recorder latencies, TaskCompletionSource done) : UntypedActor
{
    private int _received;

    protected override void OnReceive(object message)
    {
        var micros = Stopwatch.GetElapsedTime(Volatile.Read(ref dueTimestamps[_received])).Ticks / 10;
        latencies.RecordValue(Math.Max(1, micros));
        if (++_received == dueTimestamps.Length)
        {
            done.TrySetResult();
        }
    }
}
