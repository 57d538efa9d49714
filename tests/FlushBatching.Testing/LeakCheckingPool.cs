using System.Buffers;
using System.Collections.Concurrent;
using System.Runtime.CompilerServices;

namespace FlushBatching.Tests.Support;

/// <summary>
/// An array pool that knows which arrays are out, so a test fails when a buffer is never returned; with
/// <c>poison</c>, it also overwrites every array returned, so a frame still read from a chunk returned too early shows.
/// </summary>
public sealed class LeakCheckingPool(bool poison = false) : ArrayPool<byte>
{
    /// <summary>What a poisoned array is filled with.</summary>
    public const byte Poison = 0xDD;

    private readonly ConcurrentDictionary<byte[], bool> _outstanding = new(ReferenceEqualityComparer.Instance);
    private long _rented;

    public long Rented => Interlocked.Read(ref _rented);

    public int Outstanding => _outstanding.Count;

    public override byte[] Rent(int minimumLength)
    {
        var array = Shared.Rent(minimumLength);
        Interlocked.Increment(ref _rented);
        if (!_outstanding.TryAdd(array, true))
        {
            throw new InvalidOperationException("The shared pool handed out an array that is still rented.");
        }

        return array;
    }

    public override void Return(byte[] array, bool clearArray = false)
    {
        if (!_outstanding.TryRemove(array, out _))
        {
            throw new InvalidOperationException($"An array of {array.Length} bytes was returned that is not rented (returned twice?).");
        }

        if (poison)
        {
            array.AsSpan().Fill(Poison);
        }

        Shared.Return(array, clearArray);
    }

    public void AssertAllReturned() =>
        Assert.True(_outstanding.IsEmpty, $"{_outstanding.Count} of {Rented} pooled buffers were never returned.");

    private sealed class ReferenceEqualityComparer : IEqualityComparer<byte[]>
    {
        public static readonly ReferenceEqualityComparer Instance = new();

        public bool Equals(byte[]? x, byte[]? y) => ReferenceEquals(x, y);

        public int GetHashCode(byte[] obj) => RuntimeHelpers.GetHashCode(obj);
    }
}
