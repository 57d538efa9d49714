using System.Collections.Concurrent;
using System.Runtime.CompilerServices;
using DotNetty.Common;
using DotNetty.Common.Internal.Logging;
using Microsoft.Extensions.Logging;

namespace FlushBatching.DotNetty.Tests.Support;

/// <summary>
/// DotNetty's buffer leak detector at its strictest level, its reports kept: <see cref="AssertNoLeaks"/> collects
/// garbage and fails if any buffer was garbage-collected without being released.
/// </summary>
public static class LeakDetection
{
    private static readonly ConcurrentQueue<string> Leaks = new();

    [ModuleInitializer]
    internal static void Enable()
    {
        // Before any DotNetty type reads its logger: the detector takes its logger once.
        InternalLoggerFactory.DefaultFactory = LoggerFactory.Create(builder => builder.AddProvider(new LeakRecorder()));
        ResourceLeakDetector.Level = ResourceLeakDetector.DetectionLevel.Paranoid;
    }

    public static void AssertNoLeaks()
    {
        for (var i = 0; i < 2; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }

        Assert.True(Leaks.IsEmpty, string.Join(Environment.NewLine, Leaks));
    }

    private sealed class LeakRecorder : ILoggerProvider, ILogger
    {
        public ILogger CreateLogger(string categoryName) => this;

        public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel >= LogLevel.Error;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            var message = formatter(state, exception);
            if (message.Contains("LEAK", StringComparison.Ordinal))
            {
                Leaks.Enqueue(message);
            }
        }

        public void Dispose()
        {
        }
    }
}
