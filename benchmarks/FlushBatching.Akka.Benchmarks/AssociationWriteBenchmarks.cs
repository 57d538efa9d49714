using Akka.Actor;
using Akka.Configuration;
using Akka.Remote.Transport;
using BenchmarkDotNet.Attributes;
using Google.Protobuf;

namespace FlushBatching.Akka.Benchmarks;

/// <summary>
/// <see cref="AssociationHandle.Write"/> through Akka.Remote's Transport SPI, two transport instances on loopback:
/// 50 payloads in bursts, each burst waited for at the peer. Bytes allocated cover every thread (both ends, the
/// event loops and the send loop), so they are the whole cost of moving a message, not the caller's share alone.
/// </summary>
[MemoryDiagnoser]
public class AssociationWriteBenchmarks
{
    private const int Messages = 50;

    private ActorSystem _system = null!;
    private Transport _server = null!;
    private Transport _client = null!;
    private AssociationHandle _handle = null!;
    private ByteString _payload = null!;
    private readonly Counter _received = new();
    private long _sent;

    [Params("stock", "flushbatching", "flushbatching-dotnetty")]
    public string Transport { get; set; } = "";

    [Params(200, 8192)]
    public int PayloadSize { get; set; }

    [Params(1, 50)]
    public int BurstDepth { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        var transportClass = Transport switch
        {
            "stock" => "Akka.Remote.Transport.DotNetty.TcpTransport, Akka.Remote",
            "flushbatching" => "FlushBatching.Akka.BatchingTcpTransport, FlushBatching.Akka",
            _ => "FlushBatching.Akka.DotNettyBatchingTransport, FlushBatching.Akka",
        };
        // A remote system carries Akka.Remote's defaults; its section is what Akka.Remote would hand a transport.
        _system = ActorSystem.Create("bench", "akka.actor.provider = remote\nakka.remote.dot-netty.tcp { hostname = 127.0.0.1, port = 0 }");
        var config = _system.Settings.Config.GetConfig("akka.remote.dot-netty.tcp");
        _server = (Transport)Activator.CreateInstance(Type.GetType(transportClass, throwOnError: true)!, _system, config)!;
        _client = (Transport)Activator.CreateInstance(Type.GetType(transportClass, throwOnError: true)!, _system, config)!;
        var (serverAddress, serverListener) = _server.Listen().GetAwaiter().GetResult();
        var inbound = new TaskCompletionSource<AssociationHandle>();
        serverListener.SetResult(new Inbound(inbound));
        _client.Listen().GetAwaiter().GetResult().Item2.SetResult(new Inbound(new TaskCompletionSource<AssociationHandle>()));
        _handle = _client.Associate(serverAddress).GetAwaiter().GetResult();
        _handle.ReadHandlerSource.SetResult(new Counter());
        inbound.Task.GetAwaiter().GetResult().ReadHandlerSource.SetResult(_received);
        _payload = ByteString.CopyFrom(new byte[PayloadSize]);
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _client.Shutdown().GetAwaiter().GetResult();
        _server.Shutdown().GetAwaiter().GetResult();
        _system.Terminate().GetAwaiter().GetResult();
    }

    [Benchmark(OperationsPerInvoke = Messages)]
    public void Write()
    {
        for (var sent = 0; sent < Messages; sent += BurstDepth)
        {
            for (var i = 0; i < BurstDepth; i++)
            {
                while (!_handle.Write(_payload))
                {
                    Thread.Yield();
                }
            }

            _sent += BurstDepth;
            var spinner = default(SpinWait);
            while (Volatile.Read(ref _received.Payloads) < _sent)
            {
                spinner.SpinOnce();
            }
        }
    }

    private sealed class Inbound(TaskCompletionSource<AssociationHandle> handle) : IAssociationEventListener
    {
        public void Notify(IAssociationEvent ev)
        {
            if (ev is InboundAssociation association)
            {
                handle.TrySetResult(association.Association);
            }
        }
    }

    private sealed class Counter : IHandleEventListener
    {
        public long Payloads;

        public void Notify(IHandleEvent ev)
        {
            if (ev is InboundPayload)
            {
                Interlocked.Increment(ref Payloads);
            }
        }
    }
}
