using Akka.Actor;

namespace RemotePingPong.ManyPeers;

/// <summary>
/// <c>--role peers</c>, started by the hub's <see cref="ManyPeersRun"/>: this many peer ActorSystems, each with an echo
/// actor that registers with the hub's <see cref="PeerRegistry"/>, again every few seconds (the registry counts each
/// once): on a loaded machine a first association can fail its handshake, and its hello with it. They stop when
/// standard input closes, which the hub does at the end of its step, or which happens when the hub's process dies, so
/// no peer outlives its hub.
/// </summary>
internal static class PeersRole
{
    private static readonly TimeSpan HelloEvery = TimeSpan.FromSeconds(5);

    public static async Task<int> RunAsync(string hub, TransportUnderTest transport, string hostname, int count)
    {
        var systems = new List<ActorSystem>();
        try
        {
            var echoes = new List<(ActorSelection Registry, IActorRef Echo)>();
            for (var i = 0; i < count; i++)
            {
                var system = ActorSystem.Create("peer", PingPongRun.Config(transport, hostname, ""));
                systems.Add(system);
                echoes.Add((system.ActorSelection($"{hub}/user/{PeerRegistry.Name}"), system.ActorOf(Props.Create<Echo>(), "echo")));
            }

            // Console.In reads synchronously, its ReadToEndAsync too: on a thread of its own, so the hellos go on.
            var stdin = Task.Run(Console.In.ReadToEnd);
            do
            {
                foreach (var (registry, echo) in echoes)
                {
                    registry.Tell(PeerRegistry.Hello, echo);
                }
            }
            while (await Task.WhenAny(stdin, Task.Delay(HelloEvery)) != stdin);

            return 0;
        }
        finally
        {
            await Task.WhenAll(systems.Select(system => system.Terminate())).WaitAsync(TimeSpan.FromSeconds(30));
        }
    }
}
