using System.Buffers;
using System.Globalization;
using System.IO.Pipelines;
using FlushBatching.Batching;
using FlushBatching.Diagnostics;
using FlushBatching.Framing;
using FlushBatching.Tcp.Admission;
using FlushBatching.Tcp.Loops;

namespace FlushBatching.Tcp;

/// <summary>
/// Everything a framed connection needs: batching, framing, socket options, back-pressure marks, TLS, and
/// the seams (clock, scheduler, buffer pool, metrics) that tests replace.
/// </summary>
/// <remarks>
/// Immutable; each value is checked where it is set, and a refusal names the key of Akka.Remote's
/// <c>dot-netty.tcp</c> section that sets it, since that is where most values come from.
/// </remarks>
public sealed record ConnectionSettings
{
    /// <summary>On: batching already gathers small writes, so Nagle's algorithm would only add delay.</summary>
    internal const bool DefaultNoDelay = true;

    /// <summary>On, as in Akka.Remote: dead peers are found even on idle connections.</summary>
    internal const bool DefaultKeepAlive = true;

    /// <summary>256000 bytes, as in Akka.Remote. 0 leaves the operating system's default and its autotuning.</summary>
    internal const int DefaultSendBufferSize = 256000;

    /// <summary>256000 bytes, as in Akka.Remote. 0 leaves the operating system's default and its autotuning.</summary>
    internal const int DefaultReceiveBufferSize = 256000;

    /// <summary>4096 pending connections, as in Akka.Remote.</summary>
    internal const int DefaultBacklog = 4096;

    /// <summary>
    /// 8: unless set, the high-water mark starts at this many maximum-size frames (1,024,000 bytes at the default frame
    /// size) before it follows the connection's rate, and the low one is half of it. A start in frames follows the
    /// messages: below a few frames, one large message stops a connection taking writes, and every write after it waits
    /// out Akka.Remote's backoff-interval (50 ms) to be retried; far above, a stalled peer holds more memory than its
    /// traffic needs.
    /// </summary>
    internal const int DefaultWriteBufferFrames = 8;

    /// <summary>
    /// The largest <see cref="WriteBufferHighWaterMark"/>: DotNetty holds its water marks as 32-bit numbers, and a
    /// value one stack cannot honour is refused at start rather than meaning something else there.
    /// </summary>
    internal const long MaxWriteBufferWaterMark = int.MaxValue;

    /// <summary>15 seconds, as in Akka.Remote.</summary>
    internal static readonly TimeSpan DefaultConnectTimeout = TimeSpan.FromSeconds(15);

    /// <summary>1 hour: the longest <see cref="ConnectTimeout"/>; longer is a mistake in units.</summary>
    internal static readonly TimeSpan ConnectTimeoutLimit = TimeSpan.FromHours(1);

    /// <summary>
    /// 2 seconds, Akka.Remote's <c>flush-wait-on-shutdown</c>: long enough for a peer that reads to take what is queued
    /// and end its side, short enough that one that has stopped reading (a long GC pause, a paused VM) holds a closing
    /// connection, its socket and its buffers no longer than a stock node holds them.
    /// </summary>
    internal static readonly TimeSpan DefaultCloseTimeout = TimeSpan.FromSeconds(2);

    private ConnectionSettings()
    {
    }

    /// <summary>The defaults: batching on, Akka.Remote's socket options, no TLS.</summary>
    public static ConnectionSettings Default { get; } = new();

    /// <summary>When writes are flushed.</summary>
    public BatchingSettings Batching { get; private init; } = BatchingSettings.Default;

    /// <summary>The wire format: byte order and maximum frame size.</summary>
    public FramingSettings Framing { get; private init; } = FramingSettings.Default;

    /// <summary>TLS for the connection, or <c>null</c> for plain TCP.</summary>
    /// <value>The default is <c>null</c>.</value>
    public TlsSettings? Tls { get; private init; }

    /// <summary>Whether Nagle's algorithm is turned off (<c>TCP_NODELAY</c>).</summary>
    /// <value>The default is <c>true</c>.</value>
    public bool NoDelay { get; private init; } = DefaultNoDelay;

    /// <summary>Whether TCP keep-alive probes are on.</summary>
    /// <value>The default is <c>true</c>.</value>
    public bool KeepAlive { get; private init; } = DefaultKeepAlive;

    /// <summary>The socket's send buffer in bytes; 0 keeps the operating system's default.</summary>
    /// <value>The default is 256000.</value>
    public int SendBufferSize { get; private init; } = DefaultSendBufferSize;

    /// <summary>The socket's receive buffer in bytes; 0 keeps the operating system's default.</summary>
    /// <value>The default is 256000.</value>
    public int ReceiveBufferSize { get; private init; } = DefaultReceiveBufferSize;

    /// <summary>How many not-yet-accepted connections a listener queues.</summary>
    /// <value>The default is 4096.</value>
    public int Backlog { get; private init; } = DefaultBacklog;

    /// <summary>
    /// The most inbound connections a listener holds open at once: at the bound it stops accepting (connections wait in
    /// the backlog, costing this process nothing) until one of them ends. <c>null</c> derives the bound when the
    /// listener starts from the process's descriptor limit, so that a flood of connections cannot take the descriptors
    /// the process needs to live (<see cref="DescriptorBudget"/>): one budget, derived when the first such listener starts,
    /// that every listener of the process with a derived bound draws from. No bound where the system has no such limit
    /// (Windows).
    /// <c>0</c> sets no bound.
    /// </summary>
    /// <remarks>
    /// Under a bound, at most half of it may be connections that have not sent a byte yet (a TLS client's ClientHello
    /// counts): past that, the longest silent is closed once it has been silent for 200 ms, so connections that never
    /// speak cannot keep a new peer out. A protocol whose server speaks first has clients that stay silent: set no bound
    /// (<c>0</c>) for it, or one large enough for them all.
    /// </remarks>
    /// <value>The default is <c>null</c>: derived from the descriptor limit.</value>
    public int? MaxInboundConnections { get; private init; }

    /// <summary>How long connecting, TLS handshake included, may take before it fails.</summary>
    /// <value>The default is 15 seconds.</value>
    public TimeSpan ConnectTimeout { get; private init; } = DefaultConnectTimeout;

    /// <summary>
    /// How long a graceful close (<see cref="FramedConnection.CloseAsync"/>) may take, from the call: sending what is
    /// queued, then waiting for the peer to end its side. Past it the connection is aborted: the socket closes at once
    /// and what is still unsent is dropped, its buffers returned.
    /// </summary>
    /// <value>The default is 2 seconds.</value>
    public TimeSpan CloseTimeout { get; private init; } = DefaultCloseTimeout;

    /// <summary>
    /// Unsent bytes above which <see cref="FramedConnection.TryWrite"/> returns <c>false</c>, so a slow
    /// reader cannot grow the sender's memory without bound.
    /// </summary>
    /// <value>
    /// Unless set, <see cref="DefaultWriteBufferFrames"/> times <see cref="FramingSettings.MaximumFrameSize"/>, at most
    /// <see cref="MaxWriteBufferWaterMark"/>: 1,024,000 bytes at the default frame size. That is where each connection's
    /// mark starts; it then follows the connection's drain rate, up to four times the start, so that a fast link is not
    /// refused the large messages in flight on it and a slow one holds about half a second of sending.
    /// </value>
    public long WriteBufferHighWaterMark =>
        ExplicitHighWaterMark ?? Math.Min(MaxWriteBufferWaterMark, (long)DefaultWriteBufferFrames * Framing.MaximumFrameSize);

    /// <summary>Unsent bytes below which a connection that hit the high-water mark takes writes again.</summary>
    /// <value>Unless set, half of <see cref="WriteBufferHighWaterMark"/>, so writability does not flap around one value.</value>
    public long WriteBufferLowWaterMark => ExplicitLowWaterMark ?? WriteBufferHighWaterMark / 2;

    /// <summary>Whether the high-water mark was left unset, so each connection's follows its drain rate (<see cref="WriteBufferMarks"/>).</summary>
    internal bool HighWaterMarkFollowsDrain => ExplicitHighWaterMark is null;

    /// <summary>The highest a connection's high-water mark goes: <see cref="WriteBufferHighWaterMark"/> when set, else
    /// <see cref="WriteBufferMarks.MaxGrowth"/> times it, at most <see cref="MaxWriteBufferWaterMark"/>.</summary>
    internal long WriteBufferHighWaterMarkMost => HighWaterMarkFollowsDrain
        ? Math.Min(MaxWriteBufferWaterMark, WriteBufferHighWaterMark * WriteBufferMarks.MaxGrowth)
        : WriteBufferHighWaterMark;

    /// <summary>Whether the low-water mark was set, rather than half the high one.</summary>
    internal bool LowWaterMarkIsSet => ExplicitLowWaterMark is not null;

    // The marks as set, or null for the defaults, which follow the frame size.
    private long? ExplicitHighWaterMark { get; init; }

    private long? ExplicitLowWaterMark { get; init; }

    /// <summary>The clock the flush policy reads; tests replace it.</summary>
    /// <value>The default is <see cref="TimeProvider.System"/>.</value>
    public TimeProvider TimeProvider { get; private init; } = TimeProvider.System;

    /// <summary>
    /// Where a connection's send loop is woken when writes arrive; <c>null</c> wakes it on the thread pool
    /// with no allocation. Tests pass a scheduler they run by hand, to queue writes before a drain.
    /// </summary>
    /// <value>The default is <c>null</c>.</value>
    internal PipeScheduler? SendScheduler { get; private init; }

    /// <summary>Where frame buffers are rented; tests pass a pool that fails on leaks.</summary>
    /// <value>The default is <see cref="ArrayPool{T}.Shared"/>.</value>
    public ArrayPool<byte> BufferPool { get; private init; } = ArrayPool<byte>.Shared;

    /// <summary>Where counters are recorded.</summary>
    /// <value>The default is <see cref="FlushBatchingMetrics.Shared"/>, the Meter named <c>FlushBatching</c>.</value>
    public FlushBatchingMetrics Metrics { get; private init; } = FlushBatchingMetrics.Shared;

    /// <summary>Returns a copy with <see cref="Batching"/> set.</summary>
    public ConnectionSettings WithBatching(BatchingSettings batching) =>
        this with { Batching = batching ?? throw new ArgumentNullException(nameof(batching)) };

    /// <summary>Returns a copy with <see cref="Framing"/> set.</summary>
    public ConnectionSettings WithFraming(FramingSettings framing) =>
        this with { Framing = framing ?? throw new ArgumentNullException(nameof(framing)) };

    /// <summary>Returns a copy with <see cref="Tls"/> set; <c>null</c> turns TLS off.</summary>
    public ConnectionSettings WithTls(TlsSettings? tls) => this with { Tls = tls };

    /// <summary>Returns a copy with <see cref="NoDelay"/> set.</summary>
    public ConnectionSettings WithNoDelay(bool noDelay) => this with { NoDelay = noDelay };

    /// <summary>Returns a copy with <see cref="KeepAlive"/> set.</summary>
    public ConnectionSettings WithKeepAlive(bool keepAlive) => this with { KeepAlive = keepAlive };

    /// <summary>Returns a copy with <see cref="SendBufferSize"/> set; 0 keeps the operating system's default.</summary>
    public ConnectionSettings WithSendBufferSize(long bytes) =>
        this with { SendBufferSize = RequireBufferSize(SettingKeys.SendBufferSize, bytes) };

    /// <summary>Returns a copy with <see cref="ReceiveBufferSize"/> set; 0 keeps the operating system's default.</summary>
    public ConnectionSettings WithReceiveBufferSize(long bytes) =>
        this with { ReceiveBufferSize = RequireBufferSize(SettingKeys.ReceiveBufferSize, bytes) };

    /// <summary>
    /// Returns a copy with <see cref="Backlog"/> set: any whole number from 0, as stock takes it; the operating system
    /// caps it (Linux at <c>net.core.somaxconn</c>, 4096 by default).
    /// </summary>
    public ConnectionSettings WithBacklog(int backlog) => this with
    {
        Backlog = backlog >= 0
            ? backlog
            : throw new InvalidSettingException(SettingKeys.Backlog, backlog.ToString(CultureInfo.InvariantCulture), "a whole number from 0 to 2147483647"),
    };

    /// <summary>Returns a copy with <see cref="MaxInboundConnections"/> set: <c>null</c> to derive it, 0 for none, or a bound.</summary>
    public ConnectionSettings WithMaxInboundConnections(int? max) => this with
    {
        MaxInboundConnections = max is null or >= 0
            ? max
            : throw new InvalidSettingException(SettingKeys.MaxInboundConnections, max.Value.ToString(CultureInfo.InvariantCulture), "a whole number from 0 (no bound)"),
    };

    /// <summary>Returns a copy with <see cref="ConnectTimeout"/> set (above 0, at most 1 hour).</summary>
    public ConnectionSettings WithConnectTimeout(TimeSpan timeout) => this with
    {
        ConnectTimeout = timeout > TimeSpan.Zero && timeout <= ConnectTimeoutLimit
            ? timeout
            : throw new InvalidSettingException(SettingKeys.ConnectTimeout, SettingText.FormatDuration(timeout), "a duration above 0 and at most 1h"),
    };

    /// <summary>The longest <see cref="CloseTimeout"/>: an hour.</summary>
    internal static readonly TimeSpan CloseTimeoutLimit = TimeSpan.FromHours(1);

    /// <summary>
    /// Returns a copy with <see cref="CloseTimeout"/> set (0 to 1 hour): 0 aborts every close at once, dropping what is
    /// unsent, as stock closes.
    /// </summary>
    public ConnectionSettings WithCloseTimeout(TimeSpan timeout) => this with
    {
        CloseTimeout = timeout >= TimeSpan.Zero && timeout <= CloseTimeoutLimit
            ? timeout
            : throw new InvalidSettingException(SettingKeys.CloseTimeout, SettingText.FormatDuration(timeout), "a duration from 0 to 1h"),
    };

    /// <summary>
    /// Returns a copy with both back-pressure marks set: <paramref name="high"/> from 1 byte to
    /// <see cref="MaxWriteBufferWaterMark"/>, <paramref name="low"/> at least 0 and below <paramref name="high"/>.
    /// </summary>
    public ConnectionSettings WithWriteBufferWaterMarks(long high, long low) => WithWriteBufferWaterMarksOrDefaults(high, low);

    /// <summary>
    /// Returns a copy with the marks given set and the others left to their defaults (the low one half the high one),
    /// checked as <see cref="WithWriteBufferWaterMarks"/> checks them: how a configuration that sets only one reads.
    /// </summary>
    internal ConnectionSettings WithWriteBufferWaterMarksOrDefaults(long? high, long? low)
    {
        if (high is < 1 or > MaxWriteBufferWaterMark)
        {
            throw new InvalidSettingException(SettingKeys.HighWaterMark, SettingText.FormatSize(high.Value), $"a size from 1b to {SettingText.FormatSize(MaxWriteBufferWaterMark)}, which every stack can hold");
        }

        // A low mark set before is checked again against a high mark given now.
        var marks = this with { ExplicitHighWaterMark = high ?? ExplicitHighWaterMark, ExplicitLowWaterMark = low ?? ExplicitLowWaterMark };
        if (marks.ExplicitLowWaterMark is { } set && (set < 0 || set >= marks.WriteBufferHighWaterMark))
        {
            throw new InvalidSettingException(SettingKeys.LowWaterMark, SettingText.FormatSize(set), $"a size from 0b to below {SettingKeys.HighWaterMark} ({SettingText.FormatSize(marks.WriteBufferHighWaterMark)})");
        }

        return marks;
    }

    /// <summary>Returns a copy that reads time from <paramref name="timeProvider"/>.</summary>
    public ConnectionSettings WithTimeProvider(TimeProvider timeProvider) =>
        this with { TimeProvider = timeProvider ?? throw new ArgumentNullException(nameof(timeProvider)) };

    /// <summary>Returns a copy whose send loops are woken through <paramref name="scheduler"/>; <c>null</c> for the thread pool.</summary>
    internal ConnectionSettings WithSendScheduler(PipeScheduler? scheduler) => this with { SendScheduler = scheduler };

    /// <summary>Returns a copy that rents frame buffers from <paramref name="pool"/>.</summary>
    public ConnectionSettings WithBufferPool(ArrayPool<byte> pool) =>
        this with { BufferPool = pool ?? throw new ArgumentNullException(nameof(pool)) };

    /// <summary>Returns a copy that records counters in <paramref name="metrics"/>.</summary>
    public ConnectionSettings WithMetrics(FlushBatchingMetrics metrics) =>
        this with { Metrics = metrics ?? throw new ArgumentNullException(nameof(metrics)) };

    private static int RequireBufferSize(string key, long bytes) => bytes is >= 0 and <= int.MaxValue
        ? (int)bytes
        : throw new InvalidSettingException(key, SettingText.FormatSize(bytes), $"a size from 0b (the operating system's default) to {int.MaxValue}b");
}
