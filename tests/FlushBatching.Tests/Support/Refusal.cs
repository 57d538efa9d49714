namespace FlushBatching.Tests.Support;

/// <summary>What every refused setting must say: the key and the value (as <c>'value' for 'key'</c>), and what is allowed.</summary>
public static class Refusal
{
    public static void Assert(Func<object> make, string named, string allowed)
    {
        var error = Xunit.Assert.Throws<InvalidSettingException>(make);
        Xunit.Assert.Contains(named, error.Message);
        Xunit.Assert.Contains(allowed, error.Message);
    }
}
