using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;

namespace FlushBatching.Akka.Hosting.Tests.Support;

/// <summary>A Microsoft.Extensions.Logging provider that keeps every line, as a host's log would show them.</summary>
public sealed class CollectingLoggerProvider : ILoggerProvider
{
    private readonly ConcurrentQueue<(LogLevel Level, string Category, string Message)> _lines = new();

    /// <summary>Every line so far, in order.</summary>
    public IReadOnlyList<(LogLevel Level, string Category, string Message)> Lines => _lines.ToArray();

    public ILogger CreateLogger(string categoryName) => new Logger(categoryName, _lines);

    public void Dispose()
    {
    }

    private sealed class Logger(string category, ConcurrentQueue<(LogLevel, string, string)> lines) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter) =>
            lines.Enqueue((logLevel, category, formatter(state, exception)));
    }
}
