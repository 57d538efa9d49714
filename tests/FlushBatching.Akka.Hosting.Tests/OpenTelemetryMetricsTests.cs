using Akka.Cluster.Hosting;
using Akka.Remote.Hosting;
using FlushBatching.Akka.Hosting.Tests.Support;
using FlushBatching.Diagnostics;
using FlushBatching.Tests.Support;
using Microsoft.Extensions.DependencyInjection;
using OpenTelemetry;
using OpenTelemetry.Metrics;

namespace FlushBatching.Akka.Hosting.Tests;

/// <summary>docs/metrics.md's OpenTelemetry example, run: two hosts in one process, each exporting the Meter.</summary>
public sealed class OpenTelemetryMetricsTests
{
    [Theory]
    [InlineData(TransportStack.Sockets)]
    [InlineData(TransportStack.DotNetty)]
    public async Task The_documented_AddMeter_exports_every_send_bucketed_and_tagged_with_each_system_s_address(TransportStack stack)
    {
        var exported = new List<Metric>();
        int first = RawPeer.ClosedEndPoint().Port, second = RawPeer.ClosedEndPoint().Port;
        var cluster = new ClusterOptions { SeedNodes = [$"akka.tcp://{HostedNode.SystemName}@127.0.0.1:{first}"] };
        await using var a = await HostedNode.StartAsync(b => b.WithRemoting("127.0.0.1", first).WithClustering(cluster).WithFlushBatching(o => o.Transport = stack),
            services => services.AddOpenTelemetry().WithMetrics(metrics => metrics
                .AddMeter(FlushBatchingMetrics.MeterName)
                .AddInMemoryExporter(exported)));
        await using var b = await HostedNode.StartAsync(b => b.WithRemoting("127.0.0.1", second).WithClustering(cluster).WithFlushBatching(o => o.Transport = stack));
        await a.WaitForUpAsync(2);

        a.Host.Services.GetRequiredService<MeterProvider>().ForceFlush();

        // Each transport records on a Meter of its own, so the exporter may hold one stream per Meter of the same name
        // (this process runs other tests' systems alongside); the exporter appends a stream again on every export.
        var points = new List<MetricPoint>();
        foreach (var stream in exported.Where(m => m.Name == "flushbatching.bytes_per_send").Distinct())
        {
            foreach (ref readonly var point in stream.GetMetricPoints())
            {
                points.Add(point);
            }
        }

        // Bucket advice: sends from 64 B to 1 MiB get buckets of their own, not OpenTelemetry's default (up to 10,000).
        var bounds = new List<double>();
        foreach (var bucket in points[0].GetHistogramBuckets())
        {
            bounds.Add(bucket.ExplicitBound);
        }

        Assert.Equal([64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576, double.PositiveInfinity], bounds);

        // One series per transport: the two systems share a name and a process, and are told apart by address
        // (other tests' systems, running alongside in this process, have series of their own).
        var addresses = points.Select(p => Tag(p, TransportInstruments.AddressTag)).ToList();
        Assert.Single(addresses, $"akka.tcp://{HostedNode.SystemName}@127.0.0.1:{first}");
        Assert.Single(addresses, $"akka.tcp://{HostedNode.SystemName}@127.0.0.1:{second}");
        Assert.All(points, p => Assert.True(p.GetHistogramCount() > 0));
    }

    private static string? Tag(MetricPoint point, string key)
    {
        foreach (var tag in point.Tags)
        {
            if (tag.Key == key)
            {
                return tag.Value as string;
            }
        }

        return null;
    }
}
