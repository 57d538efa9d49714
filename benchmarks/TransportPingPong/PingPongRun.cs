using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Net;
using FlushBatching.Diagnostics;
using FlushBatching.Tcp;

namespace TransportPingPong;

/// <summary>Runs one row: <c>pairs</c> connections on loopback, each client keeping messages in flight against an echo.</summary>
internal static class PingPongRun
{
    public static async Task<RowResult> RunAsync(string mode, ConnectionSettings settings, int pairs, int messages, int inFlight, int payloadSize)
    {
        // Frames per send, from a Meter of the row's own: its histogram is recorded once per send.
        using var metrics = new FlushBatchingMetrics();
        settings = settings.WithMetrics(metrics);
        long frames = 0, sends = 0;
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (ReferenceEquals(instrument.Meter, metrics.Meter) && instrument.Name == "flushbatching.frames_per_send")
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<int>((_, value, _, _) =>
        {
            Interlocked.Add(ref frames, value);
            Interlocked.Increment(ref sends);
        });
        listener.Start();

        var accepted = new List<FramedConnection>();
        var allAccepted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var server = FramedListener.Start(new IPEndPoint(IPAddress.Loopback, 0), settings, connection =>
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
            var connection = await FramedConnector.ConnectAsync(server.LocalEndPoint, settings);
            var handler = new PingClient(messages, inFlight, payloadSize);
            connection.Start(handler);
            clients.Add((connection, handler));
        }

        await allAccepted.Task.WaitAsync(TimeSpan.FromSeconds(30));
        GC.Collect();
        GC.WaitForPendingFinalizers();

        var allocatedBefore = GC.GetTotalAllocatedBytes(precise: true);
        var started = Stopwatch.GetTimestamp();
        foreach (var (connection, handler) in clients)
        {
            handler.Begin(connection);
        }

        await Task.WhenAll(clients.Select(c => c.Handler.Done)).WaitAsync(TimeSpan.FromMinutes(10));
        var elapsed = Stopwatch.GetElapsedTime(started);
        var allocated = GC.GetTotalAllocatedBytes(precise: true) - allocatedBefore;

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
            sends == 0 ? 0 : (double)Interlocked.Read(ref frames) / Interlocked.Read(ref sends),
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
