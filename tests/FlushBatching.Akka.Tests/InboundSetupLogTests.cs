using FlushBatching.Akka.Tests.Support;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Admission;
using Microsoft.Extensions.Time.Testing;

namespace FlushBatching.Akka.Tests;

public sealed class InboundSetupLogTests
{
    private readonly FakeTimeProvider _time = new();
    private readonly RecordingLog _log = new();

    [Fact]
    public void A_flood_makes_its_first_line_at_once_and_its_count_when_the_interval_ends_even_if_it_stops()
    {
        var setupLog = new InboundSetupLog(_log, _time);

        setupLog.Dropped(new IOException("first"));
        for (var i = 0; i < 999; i++)
        {
            _time.Advance(TimeSpan.FromMilliseconds(5));
            setupLog.Dropped(new IOException($"peer {i}"));
        }

        Assert.Single(_log.Entries);
        Assert.Contains("first", _log.Entries[0].Message);

        // Nothing more is dropped: the count still goes out once the interval ends, and only then.
        _time.Advance(InboundSetupLog.Interval - TimeSpan.FromMilliseconds(5 * 999) - TimeSpan.FromMilliseconds(1));
        Assert.Single(_log.Entries);
        _time.Advance(TimeSpan.FromMilliseconds(1));
        Assert.Equal(2, _log.Entries.Count);
        Assert.Contains("dropped 999 more inbound connection(s)", _log.Entries[1].Message);
        Assert.Contains("peer 998", _log.Entries[1].Message);

        _time.Advance(InboundSetupLog.Interval * 3);
        Assert.Equal(2, _log.Entries.Count);
    }

    [Fact]
    public void Drops_that_go_on_make_one_line_per_interval_and_every_drop_is_counted_once()
    {
        var setupLog = new InboundSetupLog(_log, _time);
        setupLog.Dropped(new IOException("first"));
        _time.Advance(TimeSpan.FromSeconds(1));
        setupLog.Dropped(new IOException("second"));

        // The count goes out as the interval ends; a drop at that moment starts the next interval's count.
        _time.Advance(InboundSetupLog.Interval - TimeSpan.FromSeconds(1));
        setupLog.Dropped(new IOException("third"));
        _time.Advance(InboundSetupLog.Interval * 3);

        Assert.Equal(["first", "1 more", "1 more"], _log.Entries.Select(e => e.Message.Contains("first") ? "first" : e.Message.Contains("dropped 1 more") ? "1 more" : e.Message));
        Assert.Contains("second", _log.Entries[1].Message);
        Assert.Contains("third", _log.Entries[2].Message);
    }

    [Fact]
    public void Pauses_at_the_bound_within_an_interval_are_not_counted_as_drops()
    {
        var setupLog = new InboundSetupLog(_log, _time);
        setupLog.Dropped(new IOException("first"));
        for (var i = 0; i < 5; i++)
        {
            _time.Advance(TimeSpan.FromMilliseconds(100));
            setupLog.Dropped(new InboundSlots.BoundReachedException($"paused {i}"));
        }

        setupLog.Dropped(new IOException("second"));
        _time.Advance(InboundSetupLog.Interval);

        Assert.Equal(2, _log.Entries.Count);
        Assert.Contains("dropped 1 more inbound connection(s)", _log.Entries[1].Message);
        Assert.Contains("second", _log.Entries[1].Message);
    }

    [Fact]
    public void Stopping_logs_the_count_held_and_sets_no_timer_after()
    {
        var setupLog = new InboundSetupLog(_log, _time);
        setupLog.Dropped(new IOException("first"));
        setupLog.Dropped(new IOException("second"));

        setupLog.Stop();
        setupLog.Dropped(new IOException("after"));
        _time.Advance(InboundSetupLog.Interval * 3);

        Assert.Equal(2, _log.Entries.Count);
        Assert.Contains("dropped 1 more inbound connection(s)", _log.Entries[1].Message);
        Assert.Contains("second", _log.Entries[1].Message);
    }
}
