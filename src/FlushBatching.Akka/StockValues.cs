using System.Globalization;
using Akka.Configuration;
using Akka.Event;

namespace FlushBatching.Akka;

/// <summary>
/// Reads the keys stock Akka.Remote reads (or carries in its reference.conf) the way stock takes them, so that a node
/// that starts on the stock transport starts here too. A value stock takes but that has no meaning here (a size of 0
/// or less, a count past what a batch gains from, a key stock never reads given nonsense) is corrected to what stock
/// applies or, where stock applies nothing, to this package's default, with one WARNING naming the key, the value
/// written, the value applied and why. A value stock refuses too (one that does not parse where stock parses it, a
/// frame size below 32000b) is left to the settings' checks, which stop the node naming the key. Strict, nothing is
/// corrected: the value as written goes to those checks.
/// </summary>
/// <remarks>
/// Which values stock starts and serves with was found by asking stock itself: <c>StockStartsHereTooTests</c> starts a
/// stock 1.5.x node with each and has a stock peer ask it and be asked by it.
/// </remarks>
internal sealed class StockValues(SectionReader read, ILoggingAdapter? log, bool strict = false, Config? written = null)
{
    private readonly SectionReader _defaults = new(BatchingTransportSettings.Reference);

    /// <summary>Whether values are refused rather than corrected.</summary>
    public bool Strict => strict;

    /// <summary><c>maximum-frame-size</c>: stock takes 0 or less as its default (128000b), as here.</summary>
    public long FrameSize(string key)
    {
        var size = read.Size(key);
        return size <= 0 ? Corrected(key, size, _defaults.Size(key), _defaults.Text(key), "stock takes 0 or less as its default") : size;
    }

    /// <summary>
    /// A water mark: stock sets none for 0 or less, and casts one past 2147483647b to a 32-bit number that DotNetty
    /// refuses, so its default applies; 0b, this package's default, applies here then.
    /// </summary>
    public long WaterMark(string key)
    {
        var size = read.Size(key);
        return size is < 0 or > int.MaxValue
            ? Corrected(key, size, 0L, "0b (the default)", $"a mark is a size from 0b to {int.MaxValue}b, and stock applies its default for this one")
            : size;
    }

    /// <summary>
    /// A socket buffer size: stock takes 0 or less as the operating system's default, as 0b is here, and casts one
    /// past 2147483647b to a 32-bit number, which the operating system then reads as it will.
    /// </summary>
    public long BufferSize(string key)
    {
        var size = read.Size(key);
        return size is < 0 or > int.MaxValue
            ? Corrected(key, size, 0L, "0b (the operating system's default)", $"a socket buffer is a size from 0b to {int.MaxValue}b; stock casts other values away")
            : size;
    }

    /// <summary>A whole number from 0: below it, the default applies, as on stock.</summary>
    public long WholeFromZero(string key, string why)
    {
        var number = read.Whole(key);
        return number < 0 ? Corrected(key, number, _defaults.Whole(key), _defaults.Text(key), why) : number;
    }

    /// <summary>
    /// <c>batching.max-pending-writes</c>: stock counts flushes up to it and flushes when the count equals it, so at 0 or
    /// less it never flushes by count; the most this transport counts to applies then, as past it.
    /// </summary>
    public int MaxPendingWrites(string key, int most)
    {
        var count = read.Whole(key);
        if (count <= 0)
        {
            return (int)Corrected(key, count, most, most.ToString(CultureInfo.InvariantCulture), "at 0 or less stock never flushes by count; the most this transport counts to applies");
        }

        return count > most
            ? (int)Corrected(key, count, most, most.ToString(CultureInfo.InvariantCulture), "a batch of more messages than that gains nothing")
            : (int)count;
    }

    /// <summary>
    /// A key stock never reads (<c>batching.max-pending-bytes</c>): any value starts there, so any value starts here;
    /// one that does not parse or is 0 or less gets the default, one past <paramref name="most"/> gets that.
    /// </summary>
    public long UnreadSize(string key, long most)
    {
        long size;
        try
        {
            size = read.Size(key);
        }
        catch (InvalidSettingException) when (!strict)
        {
            return Corrected(key, -1L, _defaults.Size(key), _defaults.Text(key), "it is not a size, and stock never reads this key");
        }

        if (size <= 0)
        {
            return Corrected(key, size, _defaults.Size(key), _defaults.Text(key), "a batch is bounded by a size above 0, and stock never reads this key");
        }

        return size > most ? Corrected(key, size, most, SettingText.FormatSize(most), "a larger batch gains nothing, and stock never reads this key") : size;
    }

    /// <summary>
    /// A duration above 0 and at most <paramref name="most"/>. <paramref name="stockReads"/> false (for
    /// <c>batching.flush-interval</c>): stock never reads it, so one that does not parse gets the default too.
    /// </summary>
    public TimeSpan Duration(string key, TimeSpan most, bool stockReads)
    {
        TimeSpan duration;
        try
        {
            duration = read.Duration(key);
        }
        catch (InvalidSettingException) when (!stockReads && !strict)
        {
            return Corrected(key, TimeSpan.MinValue, _defaults.Duration(key), _defaults.Text(key), "it is not a duration, and stock never reads this key");
        }

        if (duration <= TimeSpan.Zero && !stockReads)
        {
            return Corrected(key, duration, _defaults.Duration(key), _defaults.Text(key), "a batch waits for a time above 0, and stock never reads this key");
        }

        return duration > most ? Corrected(key, duration, most, SettingText.FormatDuration(most), "longer is a mistake in units") : duration;
    }

    /// <summary>
    /// A pool of event loops as stock sizes it (Akka's <c>ThreadPoolConfig.ScaledPoolSize</c>): the processor count
    /// times <c>pool-size-factor</c>, its fraction dropped, then at least <c>pool-size-min</c>, then at most
    /// <c>pool-size-max</c>, which wins over a larger minimum. A WARNING names the minimum where the maximum wins over it,
    /// and the factor where it scales nothing; a pool past 1024 loops is held to 1024. A pool of no loop serves no
    /// connection, on stock either: refused, naming the key that made it.
    /// </summary>
    public int WorkerPoolSize(string pool)
    {
        var (minKey, factorKey, maxKey) = (pool + ".pool-size-min", pool + ".pool-size-factor", pool + ".pool-size-max");
        var min = read.Whole(minKey);
        var factor = read.Number(factorKey);
        var max = read.Whole(maxKey);
        var scaled = (long)Math.Clamp(Math.Floor(Environment.ProcessorCount * factor), long.MinValue / 2, long.MaxValue / 2);
        var size = Math.Min(Math.Max(scaled, min), max);
        if (size < 1)
        {
            throw max < 1
                ? new InvalidSettingException(maxKey, read.Text(maxKey), "a whole number from 1: a pool of no event loop serves no connection")
                : new InvalidSettingException(minKey, read.Text(minKey), $"a whole number from 1 while {factorKey} ({read.Text(factorKey)}) scales no loop");
        }

        if (min > max && strict)
        {
            // Named as the section wrote it: the defaults are equal, so a section that did not set pool-size-max set
            // pool-size-min (found by fuzzing: a refusal that named a key the section never set).
            throw written?.HasPath(maxKey) == true
                ? new InvalidSettingException(maxKey, read.Text(maxKey), $"a whole number from {minKey} ({read.Text(minKey)})")
                : new InvalidSettingException(minKey, read.Text(minKey), $"a whole number up to {maxKey} ({read.Text(maxKey)})");
        }

        if (min > max)
        {
            log?.Warning("FlushBatching transport: '{0} = {1}' is above {2} ({3}), which applies, as on stock: a pool of {4} event loops",
                minKey, read.Text(minKey), maxKey, read.Text(maxKey), size);
        }
        else if (scaled < 1)
        {
            log?.Warning("FlushBatching transport: '{0} = {1}' scales no event loop; {2} ({3}) applies, as on stock: a pool of {4} event loops",
                factorKey, read.Text(factorKey), minKey, read.Text(minKey), size);
        }

        if (size > WorkerPoolSizeLimit)
        {
            log?.Warning("FlushBatching transport: '{0}' sizes a pool of {1} event loops; {2} apply, the most a node runs", pool, size, WorkerPoolSizeLimit);
            return WorkerPoolSizeLimit;
        }

        return (int)size;
    }

    /// <summary>The most event loops a pool runs: more would be threads that only wait.</summary>
    internal const int WorkerPoolSizeLimit = 1024;

    /// <summary>
    /// <paramref name="applied"/> in place of <paramref name="written"/> for <paramref name="key"/>, with a WARNING saying
    /// so; strict, <paramref name="written"/>, for the settings' checks to refuse.
    /// </summary>
    public T Corrected<T>(string key, T written, T applied, string shown, string why)
    {
        if (strict)
        {
            return written;
        }

        log?.Warning("FlushBatching transport: '{0} = {1}' is taken as {2}: {3}", key, Written(key), shown, why);
        return applied;
    }

    private string Written(string key)
    {
        try
        {
            return read.Text(key);
        }
        catch (Exception e) when (e is InvalidSettingException or ConfigurationException)
        {
            return "(not a single value)";
        }
    }
}
