using System.Buffers;
using System.Net.Sockets;
using System.Text;
using Akka.Configuration;
using DotNetty.Buffers;
using ByteOrder = FlushBatching.Framing.ByteOrder;
using DotNetty.Transport.Channels.Embedded;
using FlushBatching.Akka;
using FlushBatching.Diagnostics;
using FlushBatching.DotNetty;
using FlushBatching.Framing;
using FlushBatching.Tcp;
using Google.Protobuf;

namespace FlushBatching.Fuzz;

/// <summary>
/// The fuzz targets: each takes any bytes and either handles them or throws what a peer's bad bytes deserve
/// (<see cref="InvalidFrameException"/>); anything else, or a broken invariant (<see cref="FuzzInvariantException"/>),
/// is a finding. Run under AFL++ by <c>tools/fuzz.sh</c>; every file of each target's corpus is replayed as an ordinary
/// test in CI.
/// </summary>
public static class FuzzTargets
{
    /// <summary>Every target by the name <c>tools/fuzz.sh</c> and the corpus folders use.</summary>
    public static IReadOnlyDictionary<string, Action<byte[]>> All { get; } = new Dictionary<string, Action<byte[]>>
    {
        ["frame-decoder"] = AllocationBounded(FrameDecoderTarget, perInputByte: 32, perRead: 128),
        ["receive-path"] = ReceivePathTarget,
        ["dotnetty-decoder"] = AllocationBounded(DotNettyDecoderTarget, perInputByte: 32, perRead: 512),
        ["hocon-section"] = AllocationBounded(HoconSectionTarget, perInputByte: 256, perRead: 0),
        ["dotnetty-tls"] = DotNettyTlsTarget,
    };

    // What a target on one thread may allocate for one input: a fixed allowance, a few times the input (Akka's HOCON
    // parser takes about 115 bytes per byte of text), and the cost of each read the input is cut into (the harness's
    // buffer and, in a channel pipeline, DotNetty's bookkeeping: about 215 bytes a read there, measured on inputs cut
    // into 1-byte reads). A decoder that sized a buffer from a prefix it has not checked (or checked wrong) allocates
    // far more for the prefix alone.
    private const long AllocationAllowance = 4 << 20;

    // The keys a transport's section reads, each given an arbitrary value by the hocon-section target.
    private static readonly string[] SectionKeys =
    [
        "batching.enabled", "batching.max-pending-writes", "batching.max-pending-bytes", "batching.flush-interval",
        "maximum-frame-size", "byte-order", "connection-timeout", "write-buffer-high-water-mark",
        "write-buffer-low-water-mark", "send-buffer-size", "receive-buffer-size", "tcp-no-delay", "tcp-keepalive",
        "tcp-reuse-addr", "port", "hostname", "public-hostname", "public-port", "enable-ssl", "dns-use-ipv6",
        "server-socket-worker-pool.pool-size-min", "server-socket-worker-pool.pool-size-factor",
        "server-socket-worker-pool.pool-size-max", "ssl.suppress-validation",
    ];

    // A key whose value, once accepted, makes another key required: the refusal then names that one.
    private static readonly Dictionary<string, string> RefusedThrough = new() { ["enable-ssl"] = "ssl.certificate.path" };

    private static readonly long[] MaximumFrameSizes = [FramingSettings.MinimumMaximumFrameSize, FramingSettings.DefaultMaximumFrameSize, 4_000_000, int.MaxValue];

    /// <summary>
    /// <see cref="FrameDecoder"/> over bytes from a peer. Byte 0 picks the byte order (bit 0) and the class of
    /// <c>maximum-frame-size</c> (bits 1–2: the smallest allowed, the default, 4 MB, the largest); byte 1 seeds where the
    /// rest is cut into segments, as reads would cut it. The frames decoded, the refusal of a bad length and what is
    /// left must be what <see cref="WireFormat"/>, written from the wire format alone, finds in the same bytes.
    /// </summary>
    public static void FrameDecoderTarget(byte[] input)
    {
        if (input.Length < 2)
        {
            return;
        }

        var settings = FramingFor(input[0]);
        var bytes = input.AsMemory(2);
        var buffer = Segmented(bytes, input[1]);
        var expected = WireFormat.Parse(bytes.Span, settings.ByteOrder == ByteOrder.BigEndian, settings.MaximumFrameSize);
        var found = new List<byte[]>();
        var consumed = 0L;
        var threw = false;
        try
        {
            while (FrameDecoder.TryReadFrame(ref buffer, settings, out var payload))
            {
                found.Add(payload.ToArray());
                consumed += FramingSettings.HeaderLength + payload.Length;
                Require(buffer.Length == bytes.Length - consumed, "the buffer did not move past the frame exactly");
            }
        }
        catch (InvalidFrameException)
        {
            threw = true;
        }

        // Judged by the wire format itself, not by the decoder's own ReadLength.
        Require(SameFrames(found, expected.Payloads), "the frames decoded are not the wire format's");
        Require(threw == expected.BadLength, threw ? "a length the wire format allows was refused" : "a bad length was not refused");
        Require(threw || buffer.Length == expected.Left, "what is left after the last frame is not the wire format's");
    }

    /// <summary>
    /// The sockets stack's receive side as a whole: the bytes arrive in reads of lengths set by byte 1 (as
    /// <see cref="FrameDecoderTarget"/> cuts them) through <see cref="FramedConnection"/>'s pipe to a handler. The
    /// frames the handler gets must be the ones <see cref="WireFormat"/> finds in the whole input, in order, and the
    /// connection must end with <see cref="InvalidFrameException"/> exactly when the input holds a bad prefix or ends
    /// inside a frame, cleanly otherwise.
    /// </summary>
    public static void ReceivePathTarget(byte[] input)
    {
        if (input.Length < 2)
        {
            return;
        }

        var framing = FramingFor(input[0]);
        var (expected, bad) = Reference(input.AsMemory(2), framing);
        var handler = new CollectingHandler();
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        var connection = FramedConnection.Open(socket, new ReplayIo(input.AsMemory(2), input[1]), ConnectionSettings.Default.WithFraming(framing));
        connection.Start(handler);
        var reason = handler.Closed.Task.WaitAsync(TimeSpan.FromSeconds(10)).GetAwaiter().GetResult();
        Require(SameFrames(handler.Frames, expected), $"the handler got {handler.Frames.Count} frames, the decoder finds {expected.Count}, or their bytes differ");
        Require(bad ? reason is InvalidFrameException : reason is null, $"the connection ended with {reason?.GetType().Name ?? "no error"}; bad input: {bad}");
    }

    /// <summary>
    /// The DotNetty stack's decoder in a channel pipeline: the bytes arrive in reads cut as by byte 1, then the channel
    /// closes. The payloads it passes on must be the frames <see cref="WireFormat"/> finds in the whole input, and it
    /// must raise <see cref="InvalidFrameException"/> (once) exactly when the input holds a bad prefix or ends inside a
    /// frame.
    /// </summary>
    public static void DotNettyDecoderTarget(byte[] input)
    {
        if (input.Length < 2)
        {
            return;
        }

        var framing = FramingFor(input[0]);
        var (expected, bad) = Reference(input.AsMemory(2), framing);
        using var metrics = new FlushBatchingMetrics();
        var errors = new ErrorRecorder();
        var channel = new EmbeddedChannel(new PayloadFrameDecoder(framing, metrics), errors);
        foreach (var read in Segmented(input.AsMemory(2), input[1]))
        {
            channel.WriteInbound(Unpooled.WrappedBuffer(read.ToArray()));
        }

        channel.CloseAsync().GetAwaiter().GetResult();
        var payloads = new List<byte[]>();
        while (channel.ReadInbound<byte[]>() is { } payload)
        {
            payloads.Add(payload);
        }

        Require(SameFrames(payloads, expected), $"the decoder passed on {payloads.Count} payloads, the reference finds {expected.Count}, or their bytes differ");
        Require(errors.Count == (bad ? 1 : 0) && (!bad || errors.First is InvalidFrameException),
            $"{errors.Count} errors ({errors.First?.GetType().Name}) for bad input: {bad}");
    }

    /// <summary>
    /// The DotNetty stack's TLS path, where DotNetty's <c>TlsHandler</c> parses records from peers that have not
    /// authenticated: a peer on loopback sends the bytes after byte 0 to the stack listening with TLS, in pieces cut as
    /// byte 0 seeds, and stops sending. Records cut across reads, oversized ones and garbage after a handshake start
    /// must each end in the connection closed within <c>connection-timeout</c>, nothing announced and one refusal
    /// reported, never a breakage (see <see cref="TlsListenerUnderFuzz"/>).
    /// </summary>
    public static void DotNettyTlsTarget(byte[] input)
    {
        if (input.Length < 1)
        {
            return;
        }

        TlsListenerUnderFuzz.Instance.Connect(input.AsMemory(1), input[0]);
    }

    /// <summary>
    /// A transport's section as an operator might write it, one key with an arbitrary value: byte 0 picks the key, the
    /// rest (as UTF-8) is the value, quoted or bare by byte 0's top bit (bare: letters, digits and . - + _ and spaces). Whatever HOCON parses must either be accepted or
    /// refused with <see cref="InvalidSettingException"/> naming that key: never another key, never another exception.
    /// </summary>
    public static void HoconSectionTarget(byte[] input)
    {
        if (input.Length < 1)
        {
            return;
        }

        var key = SectionKeys[(input[0] & 0x7f) % SectionKeys.Length];
        var quoted = (input[0] & 0x80) == 0;

        // No control characters, and bare values only of what a bare HOCON value is made of: Akka's own parser hangs on
        // some other text (such as `key = [@`, Akka.NET 1.5.74), before any transport reads it.
        var value = new string(Encoding.UTF8.GetString(input, 1, input.Length - 1)
            .Where(c => !char.IsControl(c) && (quoted || char.IsLetterOrDigit(c) || c is '.' or '-' or '+' or '_' or ' '))
            .ToArray());
        var text = quoted ? $"{key} = \"{value.Replace("\\", "\\\\").Replace("\"", "\\\"")}\"" : $"{key} = {value}";
        Config section;
        try
        {
            section = ConfigurationFactory.ParseString(text);
        }
        catch (Exception)
        {
            return; // HOCON that does not parse is Akka's to refuse, before any transport reads it
        }

        try
        {
            FlushBatchingTransport.Validate(section);
        }
        catch (InvalidSettingException e)
        {
            // The key the input set, not merely some key: one value is all the input changed. The one exception is a key
            // that turns on what another key must then supply (enable-ssl on, and no certificate given).
            var named = e.Key == key || (RefusedThrough.TryGetValue(key, out var through) && e.Key == through);
            Require(named && e.Message.Contains(e.Key, StringComparison.Ordinal), $"the refusal names '{e.Key}', not the key set, '{key}': {e.Message}");
        }
    }

    // The targets that run on the calling thread are held to an allocation bound per input; receive-path and
    // dotnetty-tls run on the thread pool and event loops, where another thread's allocations would count.
    private static Action<byte[]> AllocationBounded(Action<byte[]> target, int perInputByte, int perRead) => input =>
    {
        var reads = perRead == 0 || input.Length < 2 ? 0 : CountReads(input);
        var before = GC.GetAllocatedBytesForCurrentThread();
        target(input);
        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Require(allocated <= AllocationAllowance + (long)perInputByte * input.Length + (long)perRead * reads,
            $"{allocated:N0} bytes allocated for an input of {input.Length:N0} in {reads:N0} reads");
    };

    private static long CountReads(byte[] input)
    {
        var reads = 0L;
        foreach (var _ in Segmented(input.AsMemory(2), input[1]))
        {
            reads++;
        }

        return reads;
    }

    private static FramingSettings FramingFor(byte selector) => FramingSettings.Default
        .WithByteOrder((selector & 1) == 0 ? ByteOrder.LittleEndian : ByteOrder.BigEndian)
        .WithMaximumFrameSize(MaximumFrameSizes[(selector >> 1) & 3]);

    // What the wire format says the whole input holds (WireFormat, no decoder's code): the frames before any bad
    // prefix, and whether the input is bad (a prefix out of range, or bytes left that are not a whole frame).
    private static (List<byte[]> Frames, bool Bad) Reference(ReadOnlyMemory<byte> bytes, FramingSettings framing)
    {
        var (payloads, badLength, left) = WireFormat.Parse(bytes.Span, framing.ByteOrder == ByteOrder.BigEndian, framing.MaximumFrameSize);
        return (payloads, badLength || left > 0);
    }

    private static bool SameFrames(List<byte[]> found, List<byte[]> expected) =>
        found.Count == expected.Count && found.Zip(expected).All(pair => pair.First.AsSpan().SequenceEqual(pair.Second));

    // The bytes as a sequence of segments whose lengths follow from the seed: one to many, empty ones included.
    internal static ReadOnlySequence<byte> Segmented(ReadOnlyMemory<byte> bytes, byte seed)
    {
        if (seed == 0 || bytes.Length == 0)
        {
            return new ReadOnlySequence<byte>(bytes);
        }

        var random = new Random(seed);
        Segment? first = null, last = null;
        for (var at = 0; at < bytes.Length;)
        {
            // Empty pieces now and then, small ones (up to 60 B, as the seed says), and as many of any size up to the rest
            // of the input: a read may end anywhere, from one byte in to the whole input at once.
            var rest = bytes.Length - at;
            var length = random.Next(0, 9) == 0 ? 0 : random.Next(2) == 0 ? Math.Min(random.Next(1, 1 + (seed % 16) * 4), rest) : random.Next(1, rest + 1);
            var segment = new Segment(bytes.Slice(at, length), last);
            first ??= segment;
            last = segment;
            at += length;
        }

        return new ReadOnlySequence<byte>(first!, 0, last!, last!.Memory.Length);
    }

    internal static void Require(bool holds, string what)
    {
        if (!holds)
        {
            throw new FuzzInvariantException(what);
        }
    }

    private sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        public Segment(ReadOnlyMemory<byte> memory, Segment? previous)
        {
            Memory = memory;
            if (previous is not null)
            {
                RunningIndex = previous.RunningIndex + previous.Memory.Length;
                previous.Next = this;
            }
        }
    }
}
