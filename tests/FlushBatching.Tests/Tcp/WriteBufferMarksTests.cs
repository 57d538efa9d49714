using FlushBatching.Tcp;
using Microsoft.Extensions.Time.Testing;

namespace FlushBatching.Tests.Tcp;

/// <summary>How a connection's back-pressure marks follow its drain rate when unset, and stay put when set.</summary>
public sealed class WriteBufferMarksTests
{
    private const long Start = 1_024_000; // eight frames of the default maximum frame size

    private readonly FakeTimeProvider _clock = new();

    [Fact]
    public void Unset_marks_start_at_eight_frames_and_half_of_that()
    {
        var marks = new WriteBufferMarks(ConnectionSettings.Default.WithTimeProvider(_clock));

        Assert.Equal(Start, marks.High);
        Assert.Equal(Start / 2, marks.Low);
    }

    [Fact]
    public void After_a_drain_the_high_mark_is_what_the_connection_sends_in_half_a_second_at_that_rate()
    {
        var marks = new WriteBufferMarks(ConnectionSettings.Default.WithTimeProvider(_clock));

        // 1,100,000 unsent down to 500,000 in 200 ms: 3,000,000 bytes a second, 1,500,000 in half a second.
        Drain(marks, from: 1_100_000, to: 500_000, TimeSpan.FromMilliseconds(200));

        Assert.Equal(1_500_000, marks.High);
        Assert.Equal(750_000, marks.Low);
    }

    [Fact]
    public void A_fast_drain_lifts_the_high_mark_to_four_times_its_start_and_no_further()
    {
        var marks = new WriteBufferMarks(ConnectionSettings.Default.WithTimeProvider(_clock));

        Drain(marks, from: 1_100_000, to: 500_000, TimeSpan.FromMilliseconds(1));
        Assert.Equal(4 * Start, marks.High);

        Drain(marks, from: 4_200_000, to: 2_000_000, TimeSpan.Zero);
        Assert.Equal(4 * Start, marks.High);
        Assert.Equal(2 * Start, marks.Low);
    }

    [Fact]
    public void A_slow_drain_after_a_fast_one_brings_the_marks_back_to_their_start()
    {
        var marks = new WriteBufferMarks(ConnectionSettings.Default.WithTimeProvider(_clock));
        Drain(marks, from: 1_100_000, to: 500_000, TimeSpan.FromMilliseconds(1));

        // A peer that stopped reading for 10 s: 2,200,000 bytes drained in that time is 110,000 in half a second.
        Drain(marks, from: 4_200_000, to: 2_000_000, TimeSpan.FromSeconds(10));

        Assert.Equal(Start, marks.High);
        Assert.Equal(Start / 2, marks.Low);
    }

    [Fact]
    public void Marks_set_in_the_settings_never_move()
    {
        var marks = new WriteBufferMarks(ConnectionSettings.Default.WithTimeProvider(_clock).WithWriteBufferWaterMarks(high: 100_000, low: 10_000));

        Assert.False(Drain(marks, from: 100_100, to: 10_000, TimeSpan.Zero));
        Assert.Equal(100_000, marks.High);
        Assert.Equal(10_000, marks.Low);
    }

    [Fact]
    public void A_low_mark_set_alone_stays_while_the_high_one_follows_the_drain()
    {
        var settings = ConnectionSettings.Default.WithTimeProvider(_clock).WithWriteBufferWaterMarksOrDefaults(high: null, low: 100_000);
        var marks = new WriteBufferMarks(settings);

        Assert.True(Drain(marks, from: 1_100_000, to: 100_000, TimeSpan.Zero));
        Assert.Equal(4 * Start, marks.High);
        Assert.Equal(100_000, marks.Low);
    }

    [Fact]
    public void Becoming_writable_without_a_drain_having_started_changes_nothing()
    {
        var marks = new WriteBufferMarks(ConnectionSettings.Default.WithTimeProvider(_clock));

        Assert.False(marks.OnWritable(0));
        Assert.Equal(Start, marks.High);
    }

    [Fact]
    public void A_second_unwritable_signal_during_a_drain_keeps_the_drain_s_start()
    {
        var marks = new WriteBufferMarks(ConnectionSettings.Default.WithTimeProvider(_clock));
        marks.OnUnwritable(1_100_000);
        _clock.Advance(TimeSpan.FromMilliseconds(200));
        marks.OnUnwritable(1_050_000);

        // Measured from the first: 600,000 in 200 ms, not in no time at all.
        Assert.True(marks.OnWritable(500_000));
        Assert.Equal(1_500_000, marks.High);
    }

    private bool Drain(WriteBufferMarks marks, long from, long to, TimeSpan took)
    {
        marks.OnUnwritable(from);
        _clock.Advance(took);
        return marks.OnWritable(to);
    }
}
