using System.Runtime.InteropServices;
using Akka.Actor;
using Akka.Configuration;

namespace RemotePingPong;

/// <summary>
/// <c>--role server</c>: a control ActorSystem on the stock transport with an <see cref="EchoServer"/>, which starts a
/// fresh echo system for each row a client runs. Prints the address a client passes as <c>--server</c>; runs until
/// Ctrl+C or SIGTERM. With <c>--starve-pool N</c>, N work items keep the .NET thread pool, held at N threads, busy with
/// blocking sleeps the whole time, as blocking calls in a user's actors do.
/// </summary>
internal static class ServerRole
{
    public static async Task<int> RunAsync(string hostname, string publicHostname, int port, int starvePool)
    {
        var config = ConfigurationFactory.ParseString($"akka.remote.dot-netty.tcp.port = {port}")
            .WithFallback(PingPongRun.Config(TransportUnderTest.Create(TransportUnderTest.Stock, ""), hostname, publicHostname));
        var control = ActorSystem.Create("pingpong-server", config);
        control.ActorOf(Props.Create(() => new EchoServer(hostname, publicHostname)), EchoServer.Name);
        var address = ((ExtendedActorSystem)control).Provider.DefaultAddress;
        Console.WriteLine($"RemotePingPong server at {address}");
        Console.WriteLine($"run the client with: --role client --server {address}");

        using var stop = new CancellationTokenSource();
        for (var i = 0; i < starvePool; i++)
        {
            ThreadPool.UnsafeQueueUserWorkItem(Block, stop.Token, preferLocal: false);
        }

        if (starvePool > 0)
        {
            // Held at as many threads as there are blocking items, the pool cannot grow its way out: every other work item
            // waits for one of them to finish its sleep, as long as the server runs.
            ThreadPool.GetMaxThreads(out _, out var io);
            ThreadPool.SetMinThreads(starvePool, io);
            ThreadPool.SetMaxThreads(starvePool, io);
            Console.WriteLine($"starving the thread pool: {starvePool} blocking work items on {starvePool} worker threads");
        }

        Console.CancelKeyPress += (_, e) =>
        {
            e.Cancel = true;
            stop.Cancel();
        };
        using var term = PosixSignalRegistration.Create(PosixSignal.SIGTERM, context =>
        {
            context.Cancel = true;
            stop.Cancel();
        });
        try
        {
            await Task.Delay(Timeout.Infinite, stop.Token);
        }
        catch (OperationCanceledException)
        {
        }

        await control.Terminate();
        Console.WriteLine("RemotePingPong server stopped");
        return 0;
    }

    // A work item that blocks its thread 20 ms, then queues itself again behind everything else, until the server stops.
    private static void Block(CancellationToken stop)
    {
        if (!stop.IsCancellationRequested)
        {
            Thread.Sleep(20);
            ThreadPool.UnsafeQueueUserWorkItem(Block, stop, preferLocal: false);
        }
    }
}
