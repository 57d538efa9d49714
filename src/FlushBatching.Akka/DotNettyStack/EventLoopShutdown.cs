using System.Reflection;
using DotNetty.Common.Concurrency;
using DotNetty.Transport.Channels;

namespace FlushBatching.Akka.DotNettyStack;

/// <summary>
/// Stops a group of event loops within its timeout, DotNetty's own loops included. DotNetty 0.7.6's
/// <see cref="SingleThreadEventExecutor"/> can otherwise run at a full core for ever once shut down: its last step,
/// <c>CleanupAndTerminate</c>, repeats <c>ConfirmShutdown</c> until it returns true, and <c>ConfirmShutdown</c> returns
/// false after it ran any task, having queued its wake-up task again. So one task that reaches the loop between its
/// last check and that step (a socket's completion, a close, a flush from another thread) starts a cycle of running
/// its own wake-up task that nothing ends. Seen in 34 of 40 shutdowns of a loop fed by two threads, and in about 1 of
/// 20 stops of the transport under load.
/// </summary>
/// <remarks>
/// The cycle ends only when the loop's state says it is shut down, which no public member sets. So once the timeout
/// has passed, a task queued on each loop not yet terminated sets that state on the loop's own thread, the only thread
/// that writes it then, and only from "shutting down": DotNetty's loop then terminates as it would have at its
/// timeout. The state's field is read once by name from DotNetty 0.7.6, the version the package depends on; a test
/// pins it. A loop held by a task that never returns stays held: the caller names it.
/// </remarks>
internal static class EventLoopShutdown
{
    private const int ShuttingDown = 3; // SingleThreadEventExecutor.ST_SHUTTING_DOWN
    private const int Shutdown = 4; // SingleThreadEventExecutor.ST_SHUTDOWN

    // How long past the timeout a loop is left to terminate by itself, before its state is set.
    private static readonly TimeSpan Grace = TimeSpan.FromMilliseconds(100);

    private static readonly FieldInfo? State =
        typeof(SingleThreadEventExecutor).GetField("executionState", BindingFlags.NonPublic | BindingFlags.Instance);

    /// <summary>Whether DotNetty's loop state is where this version expects it: false would leave the cycle unbroken.</summary>
    internal static bool CanEndSpin => CannotEndSpin(State) is null;

    /// <summary>
    /// With <c>event-loop = dedicated</c>, the WARNING a transport logs at start when the cycle cannot be ended (another
    /// DotNetty than 0.7.6, whose loop keeps its state elsewhere): <c>null</c> when it can.
    /// </summary>
    internal static string? StartWarning => CannotEndSpin(State);

    /// <summary>Why a loop's shutdown cycle cannot be ended with <paramref name="state"/> as its state's field, or <c>null</c>.</summary>
    internal static string? CannotEndSpin(FieldInfo? state) => state?.FieldType == typeof(int)
        ? null
        : $"FlushBatching transport: '{SettingKeys.EventLoop} = {EventLoopKindNames.Dedicated}' runs on a DotNetty whose " +
          $"{nameof(SingleThreadEventExecutor)} has no int field 'executionState' (0.7.6 has): a loop that a task reaches as it " +
          "shuts down may then spin at a full core until the process ends. Use DotNetty 0.7.6, or " +
          $"'{SettingKeys.EventLoop} = {EventLoopKindNames.ThreadPool}', whose loops this does not touch.";

    /// <summary>
    /// Shuts <paramref name="group"/> down with no quiet period and <paramref name="timeout"/>, and ends the shutdown
    /// of any of DotNetty's own loops still running after it. Completes when every loop terminated.
    /// </summary>
    public static async Task ShutdownAsync(IEventLoopGroup group, TimeSpan timeout)
    {
        var terminated = group.ShutdownGracefullyAsync(TimeSpan.Zero, timeout);
        if (await Task.WhenAny(terminated, Task.Delay(timeout + Grace)).ConfigureAwait(false) != terminated)
        {
            foreach (var loop in group.Items.OfType<SingleThreadEventExecutor>().Where(loop => !loop.IsTerminated))
            {
                loop.Execute(static loop => EndShutdown((SingleThreadEventExecutor)loop), loop);
            }
        }

        await terminated.ConfigureAwait(false);
    }

    // Runs on the loop's thread, inside the cycle: ConfirmShutdown sees the loop shut down and returns true.
    private static void EndShutdown(SingleThreadEventExecutor loop)
    {
        if (CanEndSpin && (int)State!.GetValue(loop)! == ShuttingDown)
        {
            State.SetValue(loop, Shutdown);
        }
    }
}
