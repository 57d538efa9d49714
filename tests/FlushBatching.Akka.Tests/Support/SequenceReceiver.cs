using Akka.Actor;

namespace FlushBatching.Akka.Tests.Support;

/// <summary>
/// Checks that the messages of a <see cref="Payloads"/> sequence arrive all, in order, byte-identical, and releases
/// one window permit per <see cref="Window"/> messages so the sender never runs far ahead.
/// </summary>
public sealed class SequenceReceiver : ReceiveActor
{
    public const int Window = 1000;

    public SequenceReceiver(Payloads payloads, SemaphoreSlim permits, TaskCompletionSource<int> done)
    {
        var next = 0;
        Receive<byte[]>(message =>
        {
            if (!message.AsSpan().SequenceEqual(payloads.Expected(next)))
            {
                done.TrySetException(new InvalidOperationException(
                    $"Message {next} (seed {payloads.Seed}) arrived as {message.Length} bytes that differ from the {payloads.Expected(next).Length} sent."));
                return;
            }

            next++;
            if (next % Window == 0)
            {
                permits.Release();
            }

            if (next == payloads.Count)
            {
                done.TrySetResult(next);
            }
        });
    }
}
