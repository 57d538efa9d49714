using Akka.Actor;

namespace RemotePingPong;

/// <summary>
/// The server role's one actor: on request it starts a fresh echo system on a transport (one at a time), and reports
/// what its process spent during each measured row, or, for a soak, what it holds. Clients reach it on a control
/// system that stays up.
/// </summary>
public sealed class EchoServer : ReceiveActor
{
    public const string Name = "echo-server";

    private readonly string _hostname;
    private readonly string _publicHostname;
    private ActorSystem? _echoes;
    private ProcessCost? _rowStart;

    public EchoServer(string hostname, string publicHostname)
    {
        _hostname = hostname;
        _publicHostname = publicHostname;
        ReceiveAsync<StartEchoes>(async start =>
        {
            await StopEchoSystem();
            var transport = TransportUnderTest.Create(start.Transport, start.Section, start.Shared);
            _echoes = ActorSystem.Create("pingpong-echoes", PingPongRun.Config(transport, _hostname, _publicHostname));
            for (var i = 0; i < start.StandingEchoes; i++)
            {
                // Top-level actors of the echo system on purpose: the clients find them by path there.
#pragma warning disable AK1008
                _echoes.ActorOf(Props.Create<Echo>(), StandingEcho(i));
#pragma warning restore AK1008
            }

            var address = ((ExtendedActorSystem)_echoes).Provider.DefaultAddress;
            Console.WriteLine($"echo system on {transport.Name} at {address}");
            Sender.Tell(address.ToString());
        });
        Receive<BeginRow>(_ =>
        {
            _rowStart = ProcessCost.Now();
            Sender.Tell(true);
        });
        Receive<EndRow>(_ => Sender.Tell(_rowStart is { } start ? ProcessCost.Now().Since(start) : new ProcessCost(0, 0, 0, 0, 0)));
        Receive<Sample>(_ => Sender.Tell(Soak.ProcessSample.Now()));
        ReceiveAsync<StopEchoes>(async _ =>
        {
            await StopEchoSystem();
            Sender.Tell(true);
        });
    }

    /// <summary>The name of standing echo <paramref name="index"/>, a top-level actor of the echo system.</summary>
    public static string StandingEcho(int index) => $"echo-{index}";

    protected override void PostStop() => _echoes?.Terminate().Wait(TimeSpan.FromSeconds(10));

    private async Task StopEchoSystem()
    {
        if (_echoes is { } echoes)
        {
            _echoes = null;
            await echoes.Terminate();
        }
    }

    /// <summary>Start a fresh echo system on the transport named (as on the command line); the reply is its address.</summary>
    /// <param name="Section">Lines for this project's transports (<c>--set</c>).</param>
    /// <param name="Shared">Lines for every transport (<c>--maximum-frame-size</c>).</param>
    /// <param name="StandingEchoes">Echo actors started with the system (see <see cref="StandingEcho"/>), for clients
    /// that come and go while it stays up; the benchmark's rows deploy their own and ask for none.</param>
    public sealed record StartEchoes(string Transport, string Section, string Shared, int StandingEchoes = 0);

    /// <summary>The measured part of a row begins.</summary>
    public sealed record BeginRow;

    /// <summary>The measured part has ended; the reply is a <see cref="ProcessCost"/>.</summary>
    public sealed record EndRow;

    /// <summary>The reply is a <see cref="Soak.ProcessSample"/> of the server process.</summary>
    public sealed record Sample;

    /// <summary>Stop the echo system.</summary>
    public sealed record StopEchoes;
}
