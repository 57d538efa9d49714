namespace FlushBatching;

/// <summary>
/// Thrown when a setting is given a value outside what it allows. The message names the key, the value
/// given and what is allowed, so a bad line in a configuration file is found without reading code.
/// </summary>
public sealed class InvalidSettingException : ArgumentException
{
    /// <summary>Creates the exception for <paramref name="key"/> set to <paramref name="value"/>.</summary>
    /// <param name="key">The setting's key as a user writes it, such as <c>max-pending-writes</c>.</param>
    /// <param name="value">The value as given, in text.</param>
    /// <param name="allowed">What the key allows, such as <c>a whole number from 1 to 65536</c>.</param>
    /// <param name="innerException">The parse failure behind this one, if any.</param>
    public InvalidSettingException(string key, string value, string allowed, Exception? innerException = null)
        : base($"Invalid value '{value}' for '{key}': allowed is {allowed}.", key, innerException)
    {
        Key = key;
        Value = value;
        Allowed = allowed;
    }

    /// <summary>The setting's key, such as <c>max-pending-writes</c>.</summary>
    public string Key { get; }

    /// <summary>The rejected value, as text.</summary>
    public string Value { get; }

    /// <summary>What the key allows.</summary>
    public string Allowed { get; }

    /// <inheritdoc />
    public override string Message => base.Message.Split(" (Parameter", 2)[0];
}
