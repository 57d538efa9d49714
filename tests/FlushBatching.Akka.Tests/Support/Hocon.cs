namespace FlushBatching.Akka.Tests.Support;

/// <summary>Text put into HOCON by the tests: the one way a path reaches a configuration.</summary>
public static class Hocon
{
    /// <summary>
    /// <paramref name="text"/> as a quoted HOCON string, its backslashes and quotes escaped: a Windows path such as
    /// <c>C:\Users\...</c> pasted into quotes as it is fails Akka's parser (<c>Unknown escape code: U</c>).
    /// </summary>
    public static string Quoted(string text) => "\"" + text.Replace("\\", "\\\\", StringComparison.Ordinal).Replace("\"", "\\\"", StringComparison.Ordinal) + "\"";
}
