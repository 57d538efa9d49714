using FlushBatching.Tests.Support;
using FlushBatching.Diagnostics;
using FlushBatching.Framing;
using Microsoft.Extensions.Time.Testing;

namespace FlushBatching.DotNetty.Tests;

/// <summary>The DotNetty stack's write queue on its own, no channel: hand-off scheduling, order, the byte count.</summary>
public sealed class PayloadQueueTests
{
    private const long Room = 1024 * 1024;
    private readonly PayloadQueue _queue = new(TimeProvider.System, FlushBatchingMetrics.Shared);

    [Fact]
    public void The_first_write_asks_for_a_hand_off_and_later_ones_ride_on_it_until_it_runs()
    {
        Assert.Equal(PayloadQueue.Outcome.QueuedHandOffNeeded, _queue.TryEnqueue(Payload(1), Room));
        Assert.Equal(PayloadQueue.Outcome.Queued, _queue.TryEnqueue(Payload(1), Room));

        _queue.HandOff(0, static (_, _) => { });

        Assert.Equal(PayloadQueue.Outcome.QueuedHandOffNeeded, _queue.TryEnqueue(Payload(1), Room));
    }

    [Fact]
    public void A_write_made_while_a_hand_off_runs_is_taken_by_it_or_asks_for_another()
    {
        _queue.TryEnqueue(Payload(1), Room);
        var during = new List<PayloadQueue.Outcome>();
        var taken = 0;

        _queue.HandOff(0, (_, _) =>
        {
            taken++;
            if (during.Count == 0)
            {
                during.Add(_queue.TryEnqueue(Payload(2), Room));
            }
        });

        // The hand-off cleared its flag before taking: the write made during it asked for a hand-off of its own, and the
        // running hand-off took it too, so nothing waits for a hand-off that will not come.
        Assert.Equal(PayloadQueue.Outcome.QueuedHandOffNeeded, Assert.Single(during));
        Assert.Equal(2, taken);
        Assert.Equal(0, _queue.QueuedBytes);
    }

    [Fact]
    public void A_hand_off_hands_on_every_payload_in_order_as_the_same_instance()
    {
        var payloads = Enumerable.Range(0, 100).Select(i => Payload(i % 7)).ToList();
        foreach (var payload in payloads)
        {
            _queue.TryEnqueue(payload, Room);
        }

        var handed = new List<ReadOnlyMemory<byte>>();
        _queue.HandOff(handed, static (list, payload) => list.Add(payload));

        Assert.Equal(payloads.Count, handed.Count);
        Assert.All(payloads.Zip(handed), pair => Assert.Equal(pair.First, pair.Second)); // the same arrays, as given
    }

    [Fact]
    public void Writes_are_refused_once_the_bytes_queued_pass_the_room_and_taken_again_after_a_hand_off()
    {
        const int size = 100;
        const long room = 3 * (size + FramingSettings.HeaderLength);
        var accepted = 0;
        while (_queue.TryEnqueue(Payload(size), room) != PayloadQueue.Outcome.Refused)
        {
            accepted++;
        }

        // Refused once the count is above the room: the write that crossed it was still taken.
        Assert.Equal(4, accepted);
        Assert.Equal(4 * (size + FramingSettings.HeaderLength), _queue.QueuedBytes);
        Assert.Equal(PayloadQueue.Outcome.Refused, _queue.TryEnqueue(Payload(0), room));
        Assert.Equal(PayloadQueue.Outcome.Refused, _queue.TryEnqueue(Payload(0), room: -1));

        _queue.HandOff(0, static (_, _) => { });

        Assert.Equal(0, _queue.QueuedBytes);
        Assert.NotEqual(PayloadQueue.Outcome.Refused, _queue.TryEnqueue(Payload(size), room));
    }

    [Fact]
    public void A_long_hand_off_stops_counting_what_it_handed_on_after_each_16_KiB_not_only_at_its_end()
    {
        const int size = 1000;
        const int count = 200;
        for (var i = 0; i < count; i++)
        {
            _queue.TryEnqueue(Payload(size), long.MaxValue);
        }

        var handed = 0L;
        var worstDoubleCount = 0L;
        _queue.HandOff(0, (_, _) =>
        {
            handed += size + FramingSettings.HeaderLength;
            var stillCounted = _queue.QueuedBytes - (count * (size + FramingSettings.HeaderLength) - handed);
            worstDoubleCount = Math.Max(worstDoubleCount, stillCounted);
        });

        Assert.InRange(worstDoubleCount, 0, PayloadQueue.UncountEvery + size + FramingSettings.HeaderLength);
        Assert.Equal(0, _queue.QueuedBytes);
    }

    [Fact]
    public void A_hand_off_takes_off_what_it_handed_on_the_moment_that_reaches_16_KiB()
    {
        const int frame = (int)PayloadQueue.UncountEvery / 2;
        for (var i = 0; i < 3; i++)
        {
            _queue.TryEnqueue(Payload(frame - FramingSettings.HeaderLength), long.MaxValue);
        }

        var seen = new List<long>();
        _queue.HandOff(0, (_, _) => seen.Add(_queue.QueuedBytes));

        Assert.Equal([3 * frame, 3 * frame, frame], seen);
        Assert.Equal(0, _queue.QueuedBytes);
    }

    [Fact]
    public void A_payload_of_16_KiB_or_more_is_taken_off_the_count_with_what_came_before_it_just_before_it_is_handed_on()
    {
        // Counted until after its hand-off, a 60 kB payload and the outbound buffer it went to held the count at twice
        // its size: under a 64 KiB mark, a write was refused with 60 kB unsent.
        int[] sizes = [1000, 60_000, 1000];
        foreach (var size in sizes)
        {
            _queue.TryEnqueue(Payload(size), long.MaxValue);
        }

        var seen = new List<long>();
        _queue.HandOff(0, (_, _) => seen.Add(_queue.QueuedBytes));

        const int header = FramingSettings.HeaderLength;
        Assert.Equal([sizes.Sum() + 3 * header, 1000 + header, 1000 + header], seen);
        Assert.Equal(0, _queue.QueuedBytes);
    }

    [Fact]
    public void The_write_that_asks_for_a_hand_off_stamps_when_its_payloads_started_waiting()
    {
        var clock = new FakeTimeProvider();
        using var metrics = new FlushBatchingMetrics();
        using var heard = new MeterRecorder(metrics);
        var queue = new PayloadQueue(clock, metrics);
        var first = clock.GetTimestamp();

        queue.TryEnqueue(Payload(1), Room);
        clock.Advance(TimeSpan.FromMilliseconds(5));
        queue.TryEnqueue(Payload(1), Room); // rides on the hand-off already due: the oldest payload still waits since the first

        Assert.Equal(first, queue.WaitingSince);
        queue.HandOff(0, (_, _) => { });
        var second = clock.GetTimestamp();
        queue.TryEnqueue(Payload(1), Room);
        Assert.Equal(second, queue.WaitingSince);
    }

    [Fact]
    public void Unheard_the_queue_delay_costs_no_clock_read_and_its_stamp_records_nothing()
    {
        var clock = new FakeTimeProvider { AutoAdvanceAmount = TimeSpan.FromSeconds(1) };
        var queue = new PayloadQueue(clock, new FlushBatchingMetrics());
        var before = clock.GetTimestamp();

        queue.TryEnqueue(Payload(1), Room);

        Assert.Equal(0, queue.WaitingSince);
        Assert.Equal(before + TimeSpan.TicksPerSecond, clock.GetTimestamp());
    }

    [Fact]
    public void Clear_drops_what_is_queued_and_its_count()
    {
        _queue.TryEnqueue(Payload(10), Room);
        _queue.TryEnqueue(Payload(20), Room);

        _queue.Clear();

        var handed = 0;
        _queue.HandOff(0, (_, _) => handed++);
        Assert.Equal(0, handed);
        Assert.Equal(0, _queue.QueuedBytes);
    }

    private static ReadOnlyMemory<byte> Payload(int size) => new byte[size];
}
