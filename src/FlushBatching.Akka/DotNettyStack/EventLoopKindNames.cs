namespace FlushBatching.Akka.DotNettyStack;

/// <summary>
/// The names of <see cref="EventLoopKind"/> as the <c>event-loop</c> key takes them, written once: the settings read
/// them, the start-up line and the <c>flushbatching.transport.listening</c> instrument's tag print them.
/// </summary>
internal static class EventLoopKindNames
{
    public const string ThreadPool = "thread-pool";
    public const string Dedicated = "dedicated";

    public static string Of(EventLoopKind kind) => kind == EventLoopKind.Dedicated ? Dedicated : ThreadPool;

    /// <exception cref="InvalidSettingException">Neither name.</exception>
    public static EventLoopKind Parse(string text) => text.Trim().ToLowerInvariant() switch
    {
        ThreadPool => EventLoopKind.ThreadPool,
        Dedicated => EventLoopKind.Dedicated,
        _ => throw new InvalidSettingException(SettingKeys.EventLoop, text, $"{ThreadPool} or {Dedicated}"),
    };
}
