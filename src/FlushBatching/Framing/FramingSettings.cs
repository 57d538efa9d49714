using System.Globalization;

namespace FlushBatching.Framing;

/// <summary>
/// The wire format of frames: a 4-byte length prefix in <see cref="ByteOrder"/> that counts the payload
/// only, followed by the payload; a whole frame, prefix included, is at most <see cref="MaximumFrameSize"/>.
/// </summary>
/// <remarks>
/// This is the framing of Akka.Remote's DotNetty transport (<c>LengthFieldBasedFrameDecoder</c> with a
/// 4-byte length that it strips, and <c>LengthFieldPrepender</c>), so a connection in this format talks to
/// a stock node. Like that decoder, the maximum counts the prefix: the largest payload is
/// <see cref="MaximumFrameSize"/> − 4, and a stock node accepts every frame this library sends. Immutable and
/// validated in one constructor.
/// </remarks>
public sealed record FramingSettings
{
    /// <summary>The length of the prefix: 4 bytes.</summary>
    public const int HeaderLength = 4;

    /// <summary>128000 bytes: Akka.Remote's default maximum frame size.</summary>
    internal const int DefaultMaximumFrameSize = 128000;

    /// <summary>32000 bytes: Akka.Remote refuses smaller maximums, which would not fit its own handshake.</summary>
    public const int MinimumMaximumFrameSize = 32000;

    /// <summary>Little-endian: Akka.Remote's default.</summary>
    internal const ByteOrder DefaultByteOrder = ByteOrder.LittleEndian;

    private FramingSettings(long maximumFrameSize, ByteOrder byteOrder)
    {
        if (maximumFrameSize is < MinimumMaximumFrameSize or > int.MaxValue)
        {
            throw new InvalidSettingException(SettingKeys.MaximumFrameSize, SettingText.FormatSize(maximumFrameSize), $"a size from {MinimumMaximumFrameSize}b to {int.MaxValue}b");
        }

        if (!Enum.IsDefined(byteOrder))
        {
            throw new InvalidSettingException(SettingKeys.ByteOrder, ((int)byteOrder).ToString(CultureInfo.InvariantCulture), "little-endian or big-endian");
        }

        MaximumFrameSize = (int)maximumFrameSize;
        ByteOrder = byteOrder;
    }

    /// <summary>The defaults: 128000 bytes, little-endian.</summary>
    public static FramingSettings Default { get; } = new(DefaultMaximumFrameSize, DefaultByteOrder);

    /// <summary>
    /// The largest frame, length prefix included, that is sent or accepted. A peer announcing more is
    /// disconnected before anything is allocated for its frame.
    /// </summary>
    /// <value>The default is 128000; the minimum is 32000.</value>
    public int MaximumFrameSize { get; }

    /// <summary>The largest payload: <see cref="MaximumFrameSize"/> − 4.</summary>
    public int MaximumPayloadSize => MaximumFrameSize - HeaderLength;

    /// <summary>The byte order of the length prefix.</summary>
    /// <value>The default is <see cref="ByteOrder.LittleEndian"/>.</value>
    public ByteOrder ByteOrder { get; }

    /// <summary>Returns a copy with <see cref="MaximumFrameSize"/> set, from 32000 to <see cref="int.MaxValue"/>.</summary>
    public FramingSettings WithMaximumFrameSize(long bytes) => new(bytes, ByteOrder);

    /// <summary>Returns a copy with <see cref="ByteOrder"/> set.</summary>
    public FramingSettings WithByteOrder(ByteOrder byteOrder) => new(MaximumFrameSize, byteOrder);

    /// <inheritdoc />
    public override string ToString() =>
        $"{SettingKeys.MaximumFrameSize} = {MaximumFrameSize}b, {SettingKeys.ByteOrder} = {(ByteOrder == ByteOrder.LittleEndian ? "little-endian" : "big-endian")}";
}
