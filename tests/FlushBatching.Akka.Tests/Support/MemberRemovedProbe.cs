using Akka.Actor;
using Akka.Cluster;

namespace FlushBatching.Akka.Tests.Support;

/// <summary>Completes a task when its node sees the member at <c>address</c> removed from the cluster.</summary>
public sealed class MemberRemovedProbe : ReceiveActor
{
    public MemberRemovedProbe(Address address, TaskCompletionSource<Address> removed)
    {
        Cluster.Get(Context.System).Subscribe(Self, ClusterEvent.InitialStateAsEvents, typeof(ClusterEvent.MemberRemoved));
        Receive<ClusterEvent.MemberRemoved>(e =>
        {
            if (e.Member.Address == address)
            {
                removed.TrySetResult(e.Member.Address);
            }
        });
    }
}
