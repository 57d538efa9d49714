using System.Runtime.InteropServices;
using Akka.Actor;
using Akka.Configuration;

namespace RemotePingPong;

/// <summary>
/// <c>--role server</c>: a control ActorSystem on the stock transport with an <see cref="EchoServer"/>, which starts a
/// fresh echo system for each row a client runs. Prints the address a client passes as <c>--server</c>; runs until
/// Ctrl+C or SIGTERM.
/// </summary>
internal static class ServerRole
{
    public static async Task<int> RunAsync(string hostname, string publicHostname, int port)
    {
        var config = ConfigurationFactory.ParseString($"akka.remote.dot-netty.tcp.port = {port}")
            .WithFallback(PingPongRun.Config(TransportUnderTest.Create(TransportUnderTest.Stock, ""), hostname, publicHostname));
        var control = ActorSystem.Create("pingpong-server", config);
        control.ActorOf(Props.Create(() => new EchoServer(hostname, publicHostname)), EchoServer.Name);
        var address = ((ExtendedActorSystem)control).Provider.DefaultAddress;
        Console.WriteLine($"RemotePingPong server at {address}");
        Console.WriteLine($"run the client with: --role client --server {address}");

        using var stop = new CancellationTokenSource();
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
}
