using Akka.Actor;

namespace RemotePingPong;

/// <summary>
/// Where a row's echo actors live: a fresh ActorSystem per row, in this process or in a server process. The clients
/// remote-deploy their echoes into it at <see cref="StartAsync"/>'s address.
/// </summary>
internal abstract class EchoHost
{
    /// <summary>How the echo side is described in the output.</summary>
    public abstract string Description { get; }

    /// <summary>Starts a fresh echo system on <paramref name="transport"/> and returns its address.</summary>
    public abstract Task<Address> StartAsync(TransportUnderTest transport);

    /// <summary>The measured part of a row begins: the echo side notes what its process has spent so far.</summary>
    public abstract Task BeginRowAsync();

    /// <summary>
    /// The measured part has ended: what the echo side's process spent since <see cref="BeginRowAsync"/>, or
    /// <c>null</c> when it is this process, whose own measurement already holds it.
    /// </summary>
    public abstract Task<ProcessCost?> EndRowAsync();

    /// <summary>Stops the echo system; the client side has already stopped.</summary>
    public abstract Task StopAsync();
}
