using FlushBatching.Tcp;
using Google.Protobuf;
using FlushBatching.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// Where the transport is called from does not decide whether its I/O runs: Akka calls it from actors, whose task
/// scheduler runs a continuation only when the actor takes it, and test frameworks call it under synchronization
/// contexts of their own. DotNetty's bootstraps await without <c>ConfigureAwait(false)</c>, so a stack that called
/// them on the caller's context would leave its bind or its connect to whoever runs that context.
/// </summary>
public abstract partial class ConnectionStackSuite
{
    [Fact]
    public async Task A_listen_and_a_connect_started_under_a_context_that_runs_nothing_complete_and_carry_frames()
    {
        var settings = ConnectionSettings.Default;
        var listening = UnderContextThatRunsNothing(() => Listen(settings));
        var endpoint = await Poll.Within(listening);
        var connecting = UnderContextThatRunsNothing(() => Stack(settings).ConnectAsync(endpoint, settings));
        var client = await Poll.Within(connecting);
        var server = await Poll.Within(_inbound.Reader.ReadAsync().AsTask());

        var received = new Receiver();
        server.StartReading(received);
        Assert.True(client.TryWrite(ByteString.CopyFromUtf8("through")));
        Assert.Equal("through", (await Poll.Within(received.Payloads.Reader.ReadAsync().AsTask())).ToStringUtf8());
    }

    // Starts an operation as a caller on a context would: whatever it posts to that context never runs.
    private static Task<T> UnderContextThatRunsNothing<T>(Func<Task<T>> start)
    {
        var caller = SynchronizationContext.Current;
        SynchronizationContext.SetSynchronizationContext(new RunsNothing());
        try
        {
            return start();
        }
        finally
        {
            SynchronizationContext.SetSynchronizationContext(caller);
        }
    }

    private sealed class RunsNothing : SynchronizationContext
    {
        public override void Post(SendOrPostCallback d, object? state)
        {
        }

        public override void Send(SendOrPostCallback d, object? state) => throw new InvalidOperationException("a send to a context that runs nothing");
    }
}
