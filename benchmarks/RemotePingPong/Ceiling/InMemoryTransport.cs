using System.Collections.Concurrent;
using Akka.Actor;
using Akka.Configuration;
using Akka.Remote.Transport;
using FlushBatching.Framing;

namespace RemotePingPong.Ceiling;

/// <summary>
/// The ceiling: an Akka.Remote transport that does no I/O. A write hands the payload, as Akka gave it, to the peer's
/// read listener on the writing thread, so a run on it measures what Akka.Remote itself costs (protocol,
/// serialization, endpoint actors, dispatch) and nothing of a transport: the most any transport in one process can
/// reach. Benchmarks only; both ActorSystems must live in this process.
/// </summary>
/// <remarks>
/// <para>
/// It keeps the SPI's promises that Akka.Remote relies on: an inbound association is announced once Remoting listens,
/// payloads are delivered in order and held until the read handler is registered, and a disassociation reaches both
/// ends once, after every payload written before it. It never refuses a write: there is no buffer to fill.
/// </para>
/// <para>
/// With <c>hand-offs = N</c> in its section, each end's payloads cross N thread hand-offs on their way (see
/// <see cref="HandOff{T}"/>): 1 is the least a transport that reads on its own thread pays, 2 is the sockets stack's
/// shape (a send loop, then a receive loop) without its system calls or copies. With <c>copy-payloads = on</c> each
/// payload is delivered as a copy in an array of its own, the one copy (and allocation) that every transport which
/// receives bytes from a socket makes before Akka.Remote decodes them.
/// </para>
/// </remarks>
public sealed class InMemoryTransport : Transport
{
    private static readonly ConcurrentDictionary<(string Host, int Port), InMemoryTransport> Listening = new();
    private static int _lastPort = 40_000;

    private readonly TaskCompletionSource<IAssociationEventListener> _associationListener =
        new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly ConcurrentDictionary<InMemoryAssociationHandle, bool> _handles = new();
    private readonly int _handOffs;
    private readonly bool _copyPayloads;
    private Address? _address;

    /// <summary>Made by Akka.Remote from <c>transport-class</c>, with the transport's section.</summary>
    public InMemoryTransport(ActorSystem system, Config config)
    {
        System = system;
        Config = config;
        SchemeIdentifier = "tcp";
        MaximumPayloadBytes = config.GetByteSize("maximum-frame-size", null) ?? FramingSettings.Default.MaximumFrameSize;
        _handOffs = config.GetInt(HandOffsKey, 0);
        if (_handOffs is < 0 or > 2)
        {
            throw new ArgumentOutOfRangeException(nameof(config), _handOffs, $"{HandOffsKey} must be 0, 1 or 2");
        }

        _copyPayloads = config.GetBoolean(CopyPayloadsKey, false);
    }

    /// <summary>The section key for how many thread hand-offs a payload crosses: 0 (none, the default), 1 or 2.</summary>
    public const string HandOffsKey = "hand-offs";

    /// <summary>The section key for delivering each payload as a copy, as a receiver of bytes must: off by default.</summary>
    public const string CopyPayloadsKey = "copy-payloads";

    /// <inheritdoc />
    public override Task<(Address, TaskCompletionSource<IAssociationEventListener>)> Listen()
    {
        var host = Config.GetString("hostname", null) is { Length: > 0 } configured ? configured : "127.0.0.1";
        var port = Interlocked.Increment(ref _lastPort);
        _address = new Address(SchemeIdentifier, System.Name, host, port);
        Listening[(host, port)] = this;
        return Task.FromResult((_address, _associationListener));
    }

    /// <inheritdoc />
    public override bool IsResponsibleFor(Address remote) => true;

    /// <inheritdoc />
    /// <exception cref="InvalidAssociationException">No transport of this process listens at <paramref name="remoteAddress"/>.</exception>
    public override async Task<AssociationHandle> Associate(Address remoteAddress)
    {
        if (_address is null || remoteAddress.Host is null || remoteAddress.Port is null ||
            !Listening.TryGetValue((remoteAddress.Host, remoteAddress.Port.Value), out var remote))
        {
            throw new InvalidAssociationException($"No in-memory transport of this process listens at {remoteAddress}.");
        }

        var outbound = new InMemoryAssociationHandle(_address, remoteAddress, this);
        var inbound = new InMemoryAssociationHandle(remoteAddress, _address, remote);
        InMemoryAssociationHandle.Pair(outbound, inbound, _handOffs, _copyPayloads);
        remote._handles[inbound] = true;
        _handles[outbound] = true;
        var listener = await remote._associationListener.Task.ConfigureAwait(false);
        listener.Notify(new InboundAssociation(inbound));
        return outbound;
    }

    /// <inheritdoc />
    public override Task<bool> Shutdown()
    {
        if (_address is { Host: { } host, Port: { } port })
        {
            Listening.TryRemove(new KeyValuePair<(string, int), InMemoryTransport>((host, port), this));
        }

        foreach (var handle in _handles.Keys)
        {
            handle.Disassociate("the transport shut down", System.Log);
        }

        return Task.FromResult(true);
    }

    internal void Forget(InMemoryAssociationHandle handle) => _handles.TryRemove(handle, out _);
}
