using DotNetty.Common.Concurrency;
using FlushBatching.Tests.Support;

namespace FlushBatching.DotNetty.Tests.Support;

/// <summary>
/// Runs a test's step on a channel's event loop, as a user's code on the loop would run, and waits for it with
/// <see cref="Poll.Patience"/>: a step that throws fails the test with its exception, and one that never ends fails it
/// with a timeout, never a test run that hangs until its host is killed.
/// </summary>
public static class OnTheLoop
{
    public static Task<T> Run<T>(IEventExecutor loop, Func<T> step)
    {
        var done = new TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously);
        loop.Execute(() =>
        {
            try
            {
                done.SetResult(step());
            }
            catch (Exception failed)
            {
                done.SetException(failed);
            }
        });
        return Poll.Within(done.Task, "a step on the event loop");
    }

    public static Task Run(IEventExecutor loop, Action step) => Run(loop, () =>
    {
        step();
        return true;
    });
}
