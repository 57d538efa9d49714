// Two nodes of one cluster in one process, each configured as docs/getting-started.md shows with Akka.Hosting:
// WithRemoting, WithClustering, WithFlushBatching. Exits 0 once both see two members Up, 1 after a minute. With the
// argument "dotnetty" the nodes run the DotNetty stack; the sockets stack otherwise.
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using Akka.Actor;
using Akka.Cluster;
using Akka.Cluster.Hosting;
using Akka.Hosting;
using Akka.Remote.Hosting;
using FlushBatching.Akka.Hosting;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

var stack = args.Contains("dotnetty") ? TransportStack.DotNetty : TransportStack.Sockets;
int seedPort = FreePort(), otherPort = FreePort();
var seed = $"akka.tcp://MySystem@127.0.0.1:{seedPort}";

using var first = await StartNodeAsync(seedPort);
using var second = await StartNodeAsync(otherPort);
var clusters = new[] { first, second }.Select(host => Cluster.Get(host.Services.GetRequiredService<ActorSystem>())).ToArray();
var deadline = DateTime.UtcNow.AddMinutes(1);
while (!clusters.All(c => c.State.Members.Count == 2 && c.State.Members.All(m => m.Status == MemberStatus.Up)))
{
    if (DateTime.UtcNow > deadline)
    {
        Console.Error.WriteLine("no cluster of two members Up within a minute");
        return 1;
    }

    await Task.Delay(200);
}

Console.WriteLine($"cluster formed on the {stack} stack, {RuntimeInformation.FrameworkDescription}: {string.Join(", ", clusters[0].State.Members.Select(m => m.Address))}");
await first.StopAsync();
await second.StopAsync();
return 0;

async Task<IHost> StartNodeAsync(int port)
{
    var builder = Host.CreateApplicationBuilder();
    builder.Services.AddAkka("MySystem", akka => akka
        .WithRemoting("127.0.0.1", port)
        .WithClustering(new ClusterOptions { SeedNodes = [seed] })
        .WithFlushBatching(options =>
        {
            options.Transport = stack;
            options.MaxPendingWrites = 30;                          // batching.max-pending-writes
            options.MaxPendingBytes = 16 * 1024;                    // batching.max-pending-bytes, in bytes
            options.FlushInterval = TimeSpan.FromMilliseconds(40);  // batching.flush-interval
        }));
    var host = builder.Build();
    await host.StartAsync();
    return host;
}

static int FreePort()
{
    using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
    socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
    return ((IPEndPoint)socket.LocalEndPoint!).Port;
}
