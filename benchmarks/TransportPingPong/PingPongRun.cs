using System.Diagnostics;
using System.Net;
using FlushBatching.Benchmarks.Shared;
using FlushBatching.Tcp;

namespace TransportPingPong;

/// <summary>Runs one row: <c>pairs</c> connections on loopback, each client keeping messages in flight against an echo.</summary>
internal static class PingPongRun
{
    public static async Task<RowResult> RunAsync(string mode, ConnectionSettings settings, int pairs, int messages, int inFlight, int payloadSize)
    {
        // Frames per send, from the FlushBatching Meter: rows run one at a time, so what it counts in between is this row's.
        using var counter = new FrameCounter();
        var accepted = new List<FramedConnection>();
        var allAccepted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var listener = FramedListener.Start(new IPEndPoint(IPAddress.Loopback, 0), settings, connection =>
        {
            connection.Start(EchoServer.Instance);
            lock (accepted)
            {
                accepted.Add(connection);
                if (accepted.Count == pairs)
                {
                    allAccepted.TrySetResult();
                }
            }
        });

        var clients = new List<(FramedConnection Connection, PingClient Handler)>();
        for (var i = 0; i < pairs; i++)
        {
            var connection = await FramedConnector.ConnectAsync(listener.LocalEndPoint, settings);
            var handler = new PingClient(messages, inFlight, payloadSize);
            connection.Start(handler);
            clients.Add((connection, handler));
        }

        await allAccepted.Task.WaitAsync(TimeSpan.FromSeconds(30));
        GC.Collect();
        GC.WaitForPendingFinalizers();

        var countedBefore = counter.Take();
        var allocatedBefore = GC.GetTotalAllocatedBytes(precise: true);
        var started = Stopwatch.GetTimestamp();
        foreach (var (connection, handler) in clients)
        {
            handler.Begin(connection);
        }

        await Task.WhenAll(clients.Select(c => c.Handler.Done)).WaitAsync(TimeSpan.FromMinutes(10));
        var elapsed = Stopwatch.GetElapsedTime(started);
        var allocated = GC.GetTotalAllocatedBytes(precise: true) - allocatedBefore;
        var counted = counter.Take().Since(countedBefore);

        var connections = clients.Select(c => c.Connection).Concat(accepted).ToList();
        var roundTrips = clients.SelectMany(c => c.Handler.RoundTripTicks.ToArray()).Order().ToArray();
        foreach (var connection in connections)
        {
            await connection.DisposeAsync();
        }

        var totalMessages = 2L * pairs * messages;
        return new RowResult(
            mode,
            pairs,
            inFlight,
            totalMessages,
            totalMessages / elapsed.TotalSeconds,
            elapsed.TotalMilliseconds,
            counted.Sends == 0 ? 0 : (double)counted.Frames / counted.Sends,
            (double)allocated / totalMessages,
            Percentile(roundTrips, 0.50),
            Percentile(roundTrips, 0.90),
            Percentile(roundTrips, 0.99),
            Percentile(roundTrips, 1.0));
    }

    private static double Percentile(long[] sortedTicks, double quantile)
    {
        var index = (int)Math.Ceiling(quantile * sortedTicks.Length) - 1;
        return sortedTicks[Math.Clamp(index, 0, sortedTicks.Length - 1)] * 1_000_000.0 / Stopwatch.Frequency;
    }
}
