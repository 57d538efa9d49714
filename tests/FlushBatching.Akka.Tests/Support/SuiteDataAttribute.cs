using System.Reflection;
using Xunit.Sdk;

namespace FlushBatching.Akka.Tests.Support;

/// <summary>
/// A theory's rows from a static property read on the test's own class, not on the class that declares the method as
/// xunit's <c>MemberData</c> reads it: so a suite's subclass can give an inherited theory rows of its own, by hiding the
/// property with <c>new</c>.
/// </summary>
[AttributeUsage(AttributeTargets.Method)]
public sealed class SuiteDataAttribute(string property) : DataAttribute
{
    public override IEnumerable<object[]> GetData(MethodInfo testMethod)
    {
        var type = testMethod.ReflectedType ?? throw new InvalidOperationException($"{testMethod.Name} has no test class.");
        var rows = type.GetProperty(property, BindingFlags.Public | BindingFlags.Static | BindingFlags.FlattenHierarchy)?.GetValue(null) as IEnumerable<object[]>;
        return rows ?? throw new InvalidOperationException($"{type.Name} has no public static {property} of rows.");
    }
}
