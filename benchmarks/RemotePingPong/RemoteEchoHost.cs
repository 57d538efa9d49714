using Akka.Actor;

namespace RemotePingPong;

/// <summary>Echo systems in a server process (<c>--role server</c>), started and stopped through its <see cref="EchoServer"/>.</summary>
internal sealed class RemoteEchoHost : EchoHost
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(60);

    private readonly IActorRef _server;
    private readonly string? _serverTransport;
    private readonly string _overrides;
    private readonly string _shared;

    private RemoteEchoHost(IActorRef server, string serverAddress, string? serverTransport, string overrides, string shared)
    {
        _server = server;
        _serverTransport = serverTransport;
        _overrides = overrides;
        _shared = shared;
        Description = $"echo systems in the server process at {serverAddress}" +
            (serverTransport is null ? ", on the same transport as the clients" : $", on {serverTransport}");
    }

    public override string Description { get; }

    /// <summary>Finds the server's <see cref="EchoServer"/> from <paramref name="control"/>, the client's control system.</summary>
    /// <param name="serverTransport">The transport the server's echo systems use; <c>null</c> for the clients' own, row by row.</param>
    /// <param name="overrides">The <c>--set</c> lines, which apply to this project's transports on both sides.</param>
    /// <param name="shared">The lines for every transport on both sides (<c>--maximum-frame-size</c>).</param>
    public static async Task<RemoteEchoHost> ConnectAsync(ActorSystem control, string serverAddress, string? serverTransport, string overrides, string shared)
    {
        var address = Address.Parse(serverAddress);
        var server = await control.ActorSelection(new RootActorPath(address) / "user" / EchoServer.Name).ResolveOne(Patience);
        return new RemoteEchoHost(server, serverAddress, serverTransport, overrides, shared);
    }

    public override async Task<Address> StartAsync(TransportUnderTest transport)
    {
        var address = await _server.Ask<string>(new EchoServer.StartEchoes(_serverTransport ?? transport.Name, _overrides, _shared), Patience);
        return Address.Parse(address);
    }

    /// <summary>Starts an echo system that keeps <paramref name="standingEchoes"/> echo actors up for clients that come and go.</summary>
    public async Task<Address> StartStandingAsync(TransportUnderTest transport, int standingEchoes)
    {
        var address = await _server.Ask<string>(new EchoServer.StartEchoes(_serverTransport ?? transport.Name, _overrides, _shared, standingEchoes), Patience);
        return Address.Parse(address);
    }

    /// <summary>What the server process holds now.</summary>
    public Task<Soak.ProcessSample> SampleAsync() => _server.Ask<Soak.ProcessSample>(new EchoServer.Sample(), Patience);

    public override Task BeginRowAsync() => _server.Ask<bool>(new EchoServer.BeginRow(), Patience);

    public override async Task<ProcessCost?> EndRowAsync() => await _server.Ask<ProcessCost>(new EchoServer.EndRow(), Patience);

    public override Task StopAsync() => _server.Ask<bool>(new EchoServer.StopEchoes(), Patience);
}
