namespace FlushBatching.Akka.Tests;

public sealed class OpenSetTests
{
    [Fact]
    public void Close_returns_what_is_still_open_and_forgets_what_ended()
    {
        var set = new OpenSet<string>();
        var ends = new TaskCompletionSource();
        Assert.True(set.TryAdd("open", ends.Task));
        Assert.True(set.TryAdd("ended", Task.CompletedTask));

        Assert.Equal(["open"], set.Close());
    }

    [Fact]
    public void A_snapshot_lists_what_is_open_and_leaves_the_set_taking_items()
    {
        var set = new OpenSet<string>();
        Assert.True(set.TryAdd("open", new TaskCompletionSource().Task));
        Assert.True(set.TryAdd("ended", Task.CompletedTask));

        Assert.Equal(["open"], set.Snapshot());
        Assert.True(set.TryAdd("later", new TaskCompletionSource().Task));
        Assert.Equal(["later", "open"], set.Close().Order());
    }

    [Fact]
    public void An_item_that_comes_after_close_is_refused_so_that_its_owner_closes_it()
    {
        var set = new OpenSet<string>();
        set.Close();

        Assert.False(set.TryAdd("late", new TaskCompletionSource().Task));
        Assert.Empty(set.Close());
    }

    [Fact]
    public async Task Items_added_while_another_thread_closes_are_each_returned_or_refused()
    {
        for (var round = 0; round < 200; round++)
        {
            var set = new OpenSet<int>();
            var refused = new List<int>();
            var adding = Task.Run(() =>
            {
                for (var i = 0; i < 1_000; i++)
                {
                    if (!set.TryAdd(i, new TaskCompletionSource().Task))
                    {
                        refused.Add(i);
                    }
                }
            });

            var closed = set.Close();
            await adding;

            Assert.Equal(Enumerable.Range(0, 1_000), closed.Concat(refused).Order());
        }
    }
}
