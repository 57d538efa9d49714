using System.Text;
using Akka.Configuration;
using FlushBatching.Framing;
using FlushBatching.Tests.Support;
using Microsoft.Extensions.Configuration;

namespace FlushBatching.Akka.Hosting.Tests;

public sealed class FlushBatchingOptionsTests
{
    private static Config Section(FlushBatchingOptions options) =>
        options.ToConfig().GetConfig(FlushBatchingOptions.Section);

    [Fact]
    public void Options_left_unset_write_only_the_transport_class_of_the_sockets_stack()
    {
        var section = Section(new FlushBatchingOptions());

        Assert.Equal("FlushBatching.Akka.BatchingTcpTransport, FlushBatching.Akka", section.GetString("transport-class"));
        Assert.Equal(["transport-class"], section.AsEnumerable().Select(e => e.Key));
    }

    [Fact]
    public void Each_option_writes_its_key_in_the_transport_s_notation()
    {
        var section = Section(new FlushBatchingOptions
        {
            Transport = TransportStack.DotNetty,
            BatchingEnabled = false,
            MaxPendingWrites = 64,
            MaxPendingBytes = 32 * 1024,
            FlushInterval = TimeSpan.FromMilliseconds(2.5),
            WriteBufferHighWaterMark = 4 * 1024 * 1024,
            WriteBufferLowWaterMark = 1000,
            ByteOrder = ByteOrder.BigEndian,
            EventLoop = DotNettyEventLoop.Dedicated,
        });

        Assert.Equal("FlushBatching.Akka.DotNettyBatchingTransport, FlushBatching.Akka", section.GetString("transport-class"));
        Assert.Equal("off", section.GetString("batching.enabled"));
        Assert.Equal("64", section.GetString("batching.max-pending-writes"));
        Assert.Equal("32768b", section.GetString("batching.max-pending-bytes"));
        Assert.Equal("2500micros", section.GetString("batching.flush-interval"));
        Assert.Equal("4194304b", section.GetString("write-buffer-high-water-mark"));
        Assert.Equal("1000b", section.GetString("write-buffer-low-water-mark"));
        Assert.Equal("big-endian", section.GetString("byte-order"));
        Assert.Equal("dedicated", section.GetString("event-loop"));
    }

    public static TheoryData<Action<FlushBatchingOptions>, string> BadValues => new()
    {
        { o => o.MaxPendingWrites = 0, "Invalid value '0' for 'batching.max-pending-writes'" },
        { o => o.MaxPendingBytes = 128L * 1024 * 1024, "for 'batching.max-pending-bytes'" },
        { o => o.FlushInterval = TimeSpan.Zero, "Invalid value '0ms' for 'batching.flush-interval'" },
        { o => o.FlushInterval = TimeSpan.FromHours(2), "for 'batching.flush-interval'" },
        { o => { o.WriteBufferHighWaterMark = 1000; o.WriteBufferLowWaterMark = 2000; }, "for 'write-buffer-low-water-mark'" },
        { o => o.WriteBufferLowWaterMark = -1, "for 'write-buffer-low-water-mark'" },
        { o => o.MaxPendingBytes = -1, "for 'batching.max-pending-bytes'" },
        { o => o.EventLoop = (DotNettyEventLoop)7, "Invalid value '7' for 'event-loop'" },
    };

    [Theory]
    [MemberData(nameof(BadValues))]
    public void A_bad_value_is_refused_when_the_options_are_applied_naming_its_key(Action<FlushBatchingOptions> set, string message)
    {
        var options = new FlushBatchingOptions();
        set(options);

        var error = Assert.Throws<InvalidSettingException>(options.ToConfig);
        Assert.Contains(message, error.Message);
    }

    [Fact]
    public void A_low_mark_set_without_a_high_one_is_left_for_the_node_s_high_mark_to_judge()
    {
        // 2 MB is above the default high mark (eight default frames, 1000k) but below the one a node with
        // maximum-frame-size = 4MB has: only the node's whole section can tell (StartupErrorTests starts both).
        var section = Section(new FlushBatchingOptions { WriteBufferLowWaterMark = 2 * 1024 * 1024 });

        Assert.Equal("2097152b", section.GetString("write-buffer-low-water-mark"));
        Assert.False(section.HasPath("write-buffer-high-water-mark"));
    }

    [Fact]
    public void Options_bind_from_an_appsettings_section()
    {
        const string json = """
            { "FlushBatching": { "Transport": "DotNetty", "MaxPendingWrites": 128, "MaxPendingBytes": 65536,
                                 "FlushInterval": "00:00:00.005", "ByteOrder": "BigEndian", "EventLoop": "Dedicated" } }
            """;
        var configuration = new ConfigurationBuilder().AddJsonStream(new MemoryStream(Encoding.UTF8.GetBytes(json))).Build();

        var options = configuration.GetSection("FlushBatching").Get<FlushBatchingOptions>()!;

        Assert.Equal(TransportStack.DotNetty, options.Transport);
        Assert.Equal(128, options.MaxPendingWrites);
        Assert.Equal(65536, options.MaxPendingBytes);
        Assert.Equal(TimeSpan.FromMilliseconds(5), options.FlushInterval);
        Assert.Equal(ByteOrder.BigEndian, options.ByteOrder);
        Assert.Equal(DotNettyEventLoop.Dedicated, options.EventLoop);
        Assert.Null(options.BatchingEnabled);
        Assert.Equal("65536b", Section(options).GetString("batching.max-pending-bytes"));
    }

    [Fact]
    public void Getting_started_lists_every_option_in_its_table()
    {
        // The page a user reads to find the switch back (Enabled) must name every option there is.
        var page = File.ReadAllText(Path.Combine(Repository.Root, "docs", "getting-started.md"));
        var options = typeof(FlushBatchingOptions).GetProperties().Where(p => p.CanWrite).Select(p => p.Name).ToList();

        Assert.NotEmpty(options);
        Assert.All(options, option => Assert.True(page.Contains($"| `{option}` |", StringComparison.Ordinal), $"docs/getting-started.md's table of options has no row for {option}"));
    }
}
