using Akka.Actor;

namespace RemotePingPong.ManyPeers;

/// <summary>
/// <c>--role peers</c>, started by the hub's <see cref="ManyPeersRun"/>: this many peer ActorSystems, each with an echo
/// actor that registers with the hub's <see cref="PeerRegistry"/>. They stop when standard input closes, which the hub
/// does at the end of its step, or which happens when the hub's process dies, so no peer outlives its hub.
/// </summary>
internal static class PeersRole
{
    public static async Task<int> RunAsync(string hub, TransportUnderTest transport, string hostname, int count)
    {
        var systems = new List<ActorSystem>();
        try
        {
            for (var i = 0; i < count; i++)
            {
                var system = ActorSystem.Create("peer", PingPongRun.Config(transport, hostname, ""));
                systems.Add(system);
                var echo = system.ActorOf(Props.Create<Echo>(), "echo");
                system.ActorSelection($"{hub}/user/{PeerRegistry.Name}").Tell(PeerRegistry.Hello, echo);
            }

            await Console.In.ReadToEndAsync();
            return 0;
        }
        finally
        {
            await Task.WhenAll(systems.Select(system => system.Terminate())).WaitAsync(TimeSpan.FromSeconds(30));
        }
    }
}
