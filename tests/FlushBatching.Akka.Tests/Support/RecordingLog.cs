using Akka.Event;

namespace FlushBatching.Akka.Tests.Support;

/// <summary>An Akka logging adapter that keeps what it is given, for code that takes a logger without an ActorSystem.</summary>
public sealed class RecordingLog() : LoggingAdapterBase(DefaultLogMessageFormatter.Instance)
{
    public List<(LogLevel Level, string Message)> Entries { get; } = [];

    public override bool IsDebugEnabled => true;

    public override bool IsErrorEnabled => true;

    public override bool IsInfoEnabled => true;

    public override bool IsWarningEnabled => true;

    protected override void NotifyLog(LogLevel logLevel, object message, Exception? cause = null) =>
        Entries.Add((logLevel, message.ToString()!));
}
