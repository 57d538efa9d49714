namespace FlushBatching.Akka.Tests.Support;

/// <summary>
/// A fixed-seed sequence of messages with sizes drawn log-uniformly from 1 byte to a maximum: message i is a slice
/// of one random pattern, so a receiver checks order and content by comparing with the same slice.
/// </summary>
public sealed class Payloads
{
    private readonly byte[] _pattern;
    private readonly int[] _sizes;

    public Payloads(int seed, int count, int maxSize)
    {
        var random = new Random(seed);
        _pattern = new byte[maxSize + 256];
        random.NextBytes(_pattern);
        _sizes = new int[count];
        for (var i = 0; i < count; i++)
        {
            _sizes[i] = Math.Clamp((int)Math.Exp(random.NextDouble() * Math.Log(maxSize + 1)), 1, maxSize);
        }

        _sizes[^1] = maxSize; // the largest is always among them
        Seed = seed;
    }

    public int Seed { get; }

    public int Count => _sizes.Length;

    public long TotalBytes => _sizes.Sum(size => (long)size);

    public byte[] Create(int index) => Expected(index).ToArray();

    public ReadOnlySpan<byte> Expected(int index) => _pattern.AsSpan(index % 256, _sizes[index]);
}
