using Akka.Actor;
using Akka.Cluster;
using Akka.Cluster.Sharding;
using Akka.Configuration;
using Done = Akka.Done;
using BenchmarkDotNet.Attributes;

namespace FlushBatching.Akka.Benchmarks;

/// <summary>
/// Requests to sharded entities on a second node and their answers: what a user of Akka.Cluster.Sharding sees. Two
/// cluster nodes in this process over loopback; the entities live on the <c>host</c> node, the requester reaches them
/// through a shard region proxy, so every request and every answer crosses the transport. One request in flight (the
/// latency of a call) and several (a service under load), each transport beside stock.
/// </summary>
[MemoryDiagnoser]
public class ShardedRequestBenchmarks
{
    private const int Requests = 2_000;
    private const int Entities = 100;

    private ActorSystem _host = null!;
    private ActorSystem _requester = null!;
    private IActorRef _client = null!;

    [Params("stock", "flushbatching", "flushbatching-dotnetty")]
    public string Transport { get; set; } = "";

    [Params(1, 16)]
    public int InFlight { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _host = ActorSystem.Create("sharded", Config(Transport, "host", seed: null));
        var hostAddress = Cluster.Get(_host).SelfAddress;
        _requester = ActorSystem.Create("sharded", Config(Transport, "requester", seed: hostAddress.ToString()));
        Cluster.Get(_host).Join(hostAddress);
        WaitUntil(() => Cluster.Get(_requester).State.Members.Count(m => m.Status == MemberStatus.Up) == 2, "both nodes to be up");

        ClusterSharding.Get(_host).Start("entity", Props.Create<Entity>(), ClusterShardingSettings.Create(_host).WithRole("host"), new Extractor());
        var proxy = ClusterSharding.Get(_requester).StartProxy("entity", "host", new Extractor());
        _client = _requester.ActorOf(Props.Create(() => new Requester(proxy)));

        // Every entity started and every shard's home known before anything is measured.
        _client.Ask<Done>(new Run(Entities * 2, Entities), TimeSpan.FromSeconds(60)).GetAwaiter().GetResult();
    }

    [Benchmark(OperationsPerInvoke = Requests)]
    public Task RequestAndAnswer() => _client.Ask<Done>(new Run(Requests, InFlight), TimeSpan.FromSeconds(60));

    [GlobalCleanup]
    public void Cleanup()
    {
        Task.WaitAll(_requester.Terminate(), _host.Terminate());
    }

    private static global::Akka.Configuration.Config Config(string transport, string role, string? seed)
    {
        var transportClass = transport switch
        {
            "stock" => "Akka.Remote.Transport.DotNetty.TcpTransport, Akka.Remote",
            "flushbatching" => "FlushBatching.Akka.BatchingTcpTransport, FlushBatching.Akka",
            _ => "FlushBatching.Akka.DotNettyBatchingTransport, FlushBatching.Akka",
        };
        return ConfigurationFactory.ParseString($$"""
            akka.loglevel = WARNING
            akka.actor.provider = cluster
            akka.remote.dot-netty.tcp { hostname = 127.0.0.1, port = 0, transport-class = "{{transportClass}}" }
            akka.cluster.roles = [{{role}}]
            akka.cluster.seed-nodes = [{{(seed is null ? "" : $"\"{seed}\"")}}]
            akka.cluster.sharding.state-store-mode = ddata
            akka.cluster.sharding.remember-entities = off
            """);
    }

    private static void WaitUntil(Func<bool> condition, string what)
    {
        var deadline = DateTime.UtcNow.AddSeconds(60);
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"Waited 60 s for {what}.");
            }

            Thread.Sleep(50);
        }
    }

    private sealed record Request(int EntityId, int Sequence);

    private sealed record Answer(int Sequence);

    private sealed record Run(int Requests, int InFlight);

    private sealed class Extractor : HashCodeMessageExtractor
    {
        public Extractor()
            : base(maxNumberOfShards: 20)
        {
        }

        public override string EntityId(object message) => message is Request request ? request.EntityId.ToString() : null!;
    }

    private sealed class Entity : ReceiveActor
    {
        public Entity() => Receive<Request>(request => Sender.Tell(new Answer(request.Sequence)));
    }

    // Keeps InFlight requests out until Requests have been answered, then tells whoever asked.
    private sealed class Requester : ReceiveActor
    {
        private readonly IActorRef _proxy;
        private IActorRef _asker = ActorRefs.Nobody;
        private int _sent;
        private int _answered;
        private int _total;

        public Requester(IActorRef proxy)
        {
            _proxy = proxy;
            Receive<Run>(run =>
            {
                (_asker, _sent, _answered, _total) = (Sender, 0, 0, run.Requests);
                for (var i = 0; i < Math.Min(run.InFlight, run.Requests); i++)
                {
                    SendNext();
                }
            });
            Receive<Answer>(_ =>
            {
                if (++_answered == _total)
                {
                    _asker.Tell(Done.Instance);
                }
                else if (_sent < _total)
                {
                    SendNext();
                }
            });
        }

        private void SendNext()
        {
            _proxy.Tell(new Request(_sent % Entities, _sent));
            _sent++;
        }
    }
}
