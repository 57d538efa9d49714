using FlushBatching.Tcp;
using FlushBatching.Tcp.Admission;

namespace FlushBatching.Tests.Tcp;

public sealed class InboundBudgetTests
{
    [Fact]
    public async Task Listeners_drawing_from_one_budget_take_no_more_than_it_holds_and_a_slot_either_gives_back_wakes_the_other()
    {
        var budget = new InboundBudget(3, "test");
        var first = new InboundSlots(budget);
        var second = new InboundSlots(budget);

        Assert.True(first.TryTake());
        Assert.True(first.TryTake());
        Assert.True(second.TryTake());
        Assert.False(first.TryTake());
        Assert.False(second.TryTake());
        Assert.Equal(3, budget.Open);

        var waiting = second.TakeAsync(CancellationToken.None);
        await Task.Delay(50);
        Assert.False(waiting.IsCompleted);
        first.Release();
        await waiting.WaitAsync(TimeSpan.FromSeconds(10));
        Assert.Equal(3, budget.Open);
        Assert.Contains("3 inbound connections are open", first.Paused(null).Message);
    }

    [Fact]
    public async Task A_wait_for_a_slot_ends_when_cancelled_and_takes_nothing()
    {
        var budget = new InboundBudget(1, "test");
        var slots = new InboundSlots(budget);
        Assert.True(slots.TryTake());
        using var stop = new CancellationTokenSource();

        var waiting = slots.TakeAsync(stop.Token);
        await stop.CancelAsync();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => waiting.WaitAsync(TimeSpan.FromSeconds(10)));
        slots.Release();
        Assert.Equal(0, budget.Open);
    }
}
