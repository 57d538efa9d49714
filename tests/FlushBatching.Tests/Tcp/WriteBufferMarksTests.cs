using FlushBatching.Tcp;
using FlushBatching.Tcp.Loops;
using Microsoft.Extensions.Time.Testing;

namespace FlushBatching.Tests.Tcp;

/// <summary>How a connection's back-pressure marks follow its sending rate when unset, and stay put when set.</summary>
public sealed class WriteBufferMarksTests
{
    private const long Start = 1_024_000; // eight frames of the default maximum frame size

    private readonly CountingClock _clock = new();

    [Fact]
    public void Unset_marks_start_at_eight_frames_and_half_of_that()
    {
        var marks = Marks();

        Assert.Equal(Start, marks.High);
        Assert.Equal(Start / 2, marks.Low);
    }

    [Fact]
    public void After_a_window_of_backlog_the_high_mark_is_what_the_connection_sends_in_half_a_second_at_that_rate_and_says_when_it_moved()
    {
        var marks = Marks();
        Assert.False(marks.Observe(sent: 0, unsent: 600_000));
        _clock.Advance(TimeSpan.FromMilliseconds(200));

        // 600,000 bytes sent in 200 ms: 3,000,000 a second, 1,500,000 in half a second.
        Assert.True(marks.Observe(sent: 600_000, unsent: 600_000));
        Assert.Equal(1_500_000, marks.High);
        Assert.Equal(750_000, marks.Low);

        // The next window drains at the same rate: the marks stay, and say so.
        _clock.Advance(TimeSpan.FromMilliseconds(200));
        Assert.False(marks.Observe(sent: 1_200_000, unsent: 600_000));
        Assert.Equal(1_500_000, marks.High);
    }

    [Fact]
    public void Within_a_window_the_marks_wait_for_it_to_end()
    {
        var marks = Marks();
        marks.Observe(sent: 0, unsent: 600_000);
        _clock.Advance(TimeSpan.FromMilliseconds(99));

        Assert.False(marks.Observe(sent: 5_000_000, unsent: 600_000));
        Assert.Equal(Start, marks.High);
    }

    [Fact]
    public void A_drain_of_half_the_start_that_ends_within_a_window_is_measured_and_lifts_the_mark_to_four_times_its_start_and_no_further()
    {
        var marks = Marks();
        marks.Observe(sent: 0, unsent: 1_000_000);
        _clock.Advance(TimeSpan.FromMilliseconds(1));

        // Exactly half the start, 512,000 bytes, in 1 ms.
        Assert.True(marks.Observe(sent: Start / 2, unsent: 1_000_000 - Start / 2));
        Assert.Equal(4 * Start, marks.High);
        Assert.Equal(2 * Start, marks.Low);
    }

    [Fact]
    public void A_backlog_that_ends_before_half_the_start_was_sent_measures_nothing()
    {
        var marks = Marks();
        marks.Observe(sent: 0, unsent: 600_000);
        _clock.Advance(TimeSpan.FromMilliseconds(1));

        Assert.False(marks.Observe(sent: 100_000, unsent: 500_000));
        Assert.Equal(Start, marks.High);

        // Nor is the time since counted once a backlog comes back: it is measured from then.
        _clock.Advance(TimeSpan.FromSeconds(10));
        marks.Observe(sent: 100_000, unsent: 600_000);
        _clock.Advance(TimeSpan.FromMilliseconds(100));
        Assert.True(marks.Observe(sent: 1_100_000, unsent: 600_000));
        Assert.Equal(4 * Start, marks.High);
    }

    [Fact]
    public void A_link_that_slows_brings_the_marks_back_to_their_start_within_a_window()
    {
        var marks = Marks();
        marks.Observe(sent: 0, unsent: 1_100_000);
        marks.Observe(sent: 600_000, unsent: 3_000_000);
        _clock.Advance(TimeSpan.FromMilliseconds(100));
        Assert.True(marks.Observe(sent: 5_000_000, unsent: 3_000_000));
        Assert.Equal(4 * Start, marks.High);

        // 10 Mbit/s: 125,000 bytes in 100 ms, 625,000 in half a second, below the start.
        _clock.Advance(TimeSpan.FromMilliseconds(100));
        Assert.True(marks.Observe(sent: 5_125_000, unsent: 3_000_000));
        Assert.Equal(Start, marks.High);
        Assert.Equal(Start / 2, marks.Low);
    }

    [Fact]
    public void Without_a_backlog_the_clock_is_not_read()
    {
        var marks = Marks();
        for (var sent = 0; sent < 100; sent++)
        {
            marks.Observe(sent * 10_000, unsent: Start / 2);
        }

        Assert.Equal(0, _clock.Reads);
    }

    [Fact]
    public void Marks_set_in_the_settings_never_move_and_never_read_the_clock()
    {
        var marks = new WriteBufferMarks(ConnectionSettings.Default.WithTimeProvider(_clock).WithWriteBufferWaterMarks(high: 100_000, low: 10_000));

        marks.Observe(sent: 0, unsent: 1_100_000);
        _clock.Advance(TimeSpan.FromMilliseconds(1));
        Assert.False(marks.Observe(sent: 1_000_000, unsent: 0));
        Assert.Equal(100_000, marks.High);
        Assert.Equal(10_000, marks.Low);
        Assert.Equal(0, _clock.Reads);
    }

    [Fact]
    public void A_low_mark_set_alone_stays_while_the_high_one_follows_the_rate()
    {
        var marks = new WriteBufferMarks(ConnectionSettings.Default.WithTimeProvider(_clock).WithWriteBufferWaterMarksOrDefaults(high: null, low: 100_000));
        marks.Observe(sent: 0, unsent: 1_100_000);

        Assert.True(marks.Observe(sent: 1_000_000, unsent: 100_000));
        Assert.Equal(4 * Start, marks.High);
        Assert.Equal(100_000, marks.Low);
    }

    [Fact]
    public void Once_a_backlog_ends_the_clock_is_not_read_again_until_the_next_one()
    {
        var marks = Marks();
        marks.Observe(sent: 0, unsent: 600_000);
        marks.Observe(sent: 100_000, unsent: 0);
        var reads = _clock.Reads;

        for (var sent = 0; sent < 100; sent++)
        {
            marks.Observe(100_000 + sent * 10_000, unsent: Start / 2);
        }

        Assert.Equal(reads, _clock.Reads);
    }

    private WriteBufferMarks Marks() => new(ConnectionSettings.Default.WithTimeProvider(_clock));

    private sealed class CountingClock : FakeTimeProvider
    {
        public int Reads { get; private set; }

        public override long GetTimestamp()
        {
            Reads++;
            return base.GetTimestamp();
        }
    }
}
