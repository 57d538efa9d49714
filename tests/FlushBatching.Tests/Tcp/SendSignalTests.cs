using FlushBatching.Tcp;
using FlushBatching.Tcp.Loops;

namespace FlushBatching.Tests.Tcp;

/// <summary>The send loop's wake-up on its own: one park, any number of wakes, and a park after it waits afresh.</summary>
public sealed class SendSignalTests
{
    [Fact]
    public void The_first_wake_ends_a_park_and_more_wakes_for_it_do_nothing()
    {
        var signal = new SendSignal();
        signal.Reset();
        var parked = signal.WaitAsync();
        Assert.False(parked.IsCompleted);

        signal.Execute();
        Assert.True(parked.IsCompletedSuccessfully);

        // A second wake racing for the same park: completing it twice would throw.
        signal.Execute();
        SendSignal.Set(signal);
    }

    [Fact]
    public void A_park_after_a_wake_waits_for_a_wake_of_its_own()
    {
        var signal = new SendSignal();
        signal.Reset();
        signal.Execute();
        Assert.True(signal.WaitAsync().IsCompletedSuccessfully);

        signal.Reset();
        var parked = signal.WaitAsync();
        Assert.False(parked.IsCompleted);

        SendSignal.Set(signal);
        Assert.True(parked.IsCompletedSuccessfully);
    }
}
