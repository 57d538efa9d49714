using DotNetty.Common.Concurrency;
using DotNetty.Transport.Channels;

namespace FlushBatching.Akka.Tests;

public sealed class DotNettyFramePoolTests : IAsyncLifetime
{
    private readonly MultithreadEventLoopGroup _group = new(1);
    private IEventExecutor _loop = null!;
    private DotNettyFramePool _pool = null!;

    public Task InitializeAsync()
    {
        _loop = _group.GetNext();
        _pool = new DotNettyFramePool(_loop);
        return Task.CompletedTask;
    }

    public Task DisposeAsync() => _group.ShutdownGracefullyAsync(TimeSpan.Zero, TimeSpan.FromSeconds(1)).WaitAsync(TimeSpan.FromSeconds(30));

    [Fact]
    public Task A_frame_released_on_the_event_loop_comes_back_empty_with_one_reference() => OnLoop(() =>
    {
        var first = _pool.Rent(100);
        first.WriteBytes(new byte[100]);
        Assert.True(first.Release());

        var second = _pool.Rent(50);
        Assert.Same(first, second);
        Assert.Equal(1, second.ReferenceCount);
        Assert.Equal(0, second.ReadableBytes);
        Assert.True(second.Capacity >= 50);
    });

    [Fact]
    public Task A_reused_frame_grows_to_a_larger_request() => OnLoop(() =>
    {
        var small = _pool.Rent(100);
        small.Release();

        var large = _pool.Rent(5000);
        Assert.True(large.Capacity >= 5000);
        large.WriteBytes(new byte[5000]);
        Assert.Equal(5000, large.ReadableBytes);
    });

    [Fact]
    public async Task A_frame_released_off_the_event_loop_is_not_reused()
    {
        var frame = await _loop.SubmitAsync(() => _pool.Rent(100));
        frame.Release();

        Assert.NotSame(frame, await _loop.SubmitAsync(() => _pool.Rent(100)));
    }

    [Fact]
    public Task A_frame_above_the_kept_size_is_made_to_measure_and_left_to_the_garbage_collector() => OnLoop(() =>
    {
        var large = _pool.Rent(DotNettyFramePool.MaxKeptCapacity + 1);
        Assert.Equal(DotNettyFramePool.MaxKeptCapacity + 1, large.Capacity);
        large.Release();

        Assert.NotSame(large, _pool.Rent(DotNettyFramePool.MaxKeptCapacity + 1));
    });

    [Fact]
    public Task A_frame_above_the_kept_size_leaves_the_kept_frames_for_later() => OnLoop(() =>
    {
        var small = _pool.Rent(100);
        small.Release();

        var large = _pool.Rent(DotNettyFramePool.MaxKeptCapacity + 1);
        Assert.NotSame(small, large);
        large.Release();

        Assert.Same(small, _pool.Rent(100));
    });

    [Fact]
    public Task At_most_MaxKept_frames_are_kept() => OnLoop(() =>
    {
        var frames = Enumerable.Range(0, DotNettyFramePool.MaxKept + 1).Select(_ => _pool.Rent(10)).ToList();
        frames.ForEach(frame => frame.Release());

        var again = Enumerable.Range(0, DotNettyFramePool.MaxKept + 1).Select(_ => _pool.Rent(10)).ToList();
        Assert.Equal(DotNettyFramePool.MaxKept, again.Count(frame => frames.Any(old => ReferenceEquals(old, frame))));
    });

    [Fact]
    public Task At_most_MaxKeptBytes_are_kept() => OnLoop(() =>
    {
        var count = DotNettyFramePool.MaxKeptBytes / DotNettyFramePool.MaxKeptCapacity;
        var frames = Enumerable.Range(0, count + 1).Select(_ => _pool.Rent(DotNettyFramePool.MaxKeptCapacity)).ToList();
        frames.ForEach(frame => frame.Release());

        var again = Enumerable.Range(0, count + 1).Select(_ => _pool.Rent(DotNettyFramePool.MaxKeptCapacity)).ToList();
        Assert.Equal(count, again.Count(frame => frames.Any(old => ReferenceEquals(old, frame))));
    });

    private Task OnLoop(Action test) => _loop.SubmitAsync(() =>
    {
        test();
        return 0;
    });
}
