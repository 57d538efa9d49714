using Akka.Actor;

namespace RemotePingPong;

/// <summary>The echo system in this process, beside the clients: the default mode.</summary>
internal sealed class InProcessEchoHost : EchoHost
{
    private ActorSystem? _system;

    public override string Description => "echo system in this process";

    public override Task<Address> StartAsync(TransportUnderTest transport)
    {
        _system = ActorSystem.Create("pingpong-echoes", PingPongRun.Config(transport, "127.0.0.1", ""));
        return Task.FromResult(((ExtendedActorSystem)_system).Provider.DefaultAddress);
    }

    public override Task BeginRowAsync() => Task.CompletedTask;

    public override Task<ProcessCost?> EndRowAsync() => Task.FromResult<ProcessCost?>(null);

    public override async Task StopAsync()
    {
        if (_system is { } system)
        {
            _system = null;
            await system.Terminate();
        }
    }
}
