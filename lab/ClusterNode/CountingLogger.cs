using Akka.Actor;
using Akka.Event;

namespace ClusterNode;

/// <summary>Akka's logger for the node: counts warnings and errors for the report, and writes them to standard error.</summary>
public sealed class CountingLogger : ReceiveActor
{
    private static long _warnings;
    private static long _errors;

    public CountingLogger()
    {
        Receive<InitializeLogger>(_ => Sender.Tell(new LoggerInitialized()));
        Receive<Warning>(e =>
        {
            Interlocked.Increment(ref _warnings);
            Console.Error.WriteLine(e.ToString());
        });
        Receive<Error>(e =>
        {
            Interlocked.Increment(ref _errors);
            Console.Error.WriteLine(e.ToString());
        });
        Receive<LogEvent>(_ => { });
    }

    public static long Warnings => Interlocked.Read(ref _warnings);

    public static long Errors => Interlocked.Read(ref _errors);
}
