using System.Reflection;
using System.Security.Cryptography.X509Certificates;
using Akka.Actor;
using Akka.Event;
using Akka.Remote.Transport.DotNetty;

namespace FlushBatching.Akka;

/// <summary>
/// A certificate picked again for each connection by the running Akka.NET's own certificate source
/// (<c>Akka.IO.TlsCertificateSource</c>, new in 1.5.75): a folder of PKCS#12 or PEM files, a store searched by common
/// name, or a source given in code through <c>DotNettySslSetup.FromSource</c>. The source decides as stock decides: it
/// looks again at most once every 10 seconds, takes the valid certificate issued last that is allowed for the role
/// (with mutual authentication, both client and server authentication), keeps its last pick while that one is in date
/// when a look-up finds none, and logs each such fall-back and change of pick as a WARNING or INFO through Akka's log.
/// </summary>
/// <remarks>
/// The packages build against the oldest Akka.NET they support, which has no source, so the source's members are found
/// by reflection, once, at start; a connection calls a delegate. On an Akka.NET before 1.5.75 nothing is found, and the
/// <c>ssl</c> keys are read as that Akka.NET reads them (docs/dependencies.md says why this, not a higher floor).
/// </remarks>
internal sealed class StockCertificateSource
{
    private const string SourceTypeName = "Akka.IO.TlsCertificateSource";

    // SslSettings.GetCertificate(ILoggingAdapter) is public in 1.5.75; ValidateCertificateAsync(ILoggingAdapter), the
    // start-up check that waits for the first look-up, is internal.
    private const BindingFlags Instance = BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic;

    private static readonly Type? SourceType = typeof(ActorSystem).Assembly.GetType(SourceTypeName);

    private static readonly MethodInfo? SslSettingsFromSource = SourceType is null
        ? null
        : typeof(DotNettySslSetup).Assembly.GetType("Akka.Remote.Transport.DotNetty.SslSettings")?
            .GetMethod("FromSource", BindingFlags.Static | BindingFlags.Public, [SourceType, typeof(bool), typeof(bool), typeof(bool), typeof(CertificateValidationCallback)]);

    private readonly Func<ILoggingAdapter, X509Certificate2?> _current;
    private readonly Func<ILoggingAdapter, Task>? _validate;
    private readonly ILoggingAdapter _log;

    private StockCertificateSource(object sslSettings, ILoggingAdapter log)
    {
        _log = log;
        _current = sslSettings.GetType().GetMethod("GetCertificate", Instance, [typeof(ILoggingAdapter)])!
            .CreateDelegate<Func<ILoggingAdapter, X509Certificate2?>>(sslSettings);
        _validate = sslSettings.GetType().GetMethod("ValidateCertificateAsync", Instance, [typeof(ILoggingAdapter)])?
            .CreateDelegate<Func<ILoggingAdapter, Task>>(sslSettings);
    }

    /// <summary>Whether the running Akka.NET has certificate sources (1.5.75 and later).</summary>
    public static bool Available => SourceType is not null && SslSettingsFromSource is not null;

    /// <summary>A source over a folder of PKCS#12 or PEM files, each read with <paramref name="password"/> and <paramref name="flags"/>.</summary>
    public static StockCertificateSource FromFolder(string path, string? password, X509KeyStorageFlags flags, bool requireMutualAuthentication, ILoggingAdapter log) =>
        Over(Make("FromFolder", [typeof(string), typeof(string), typeof(X509KeyStorageFlags)], path, password, flags), requireMutualAuthentication, log);

    /// <summary>A source over the store <paramref name="storeName"/>, by the certificate's common name.</summary>
    public static StockCertificateSource FromStore(string commonName, string storeName, StoreLocation location, bool requireMutualAuthentication, ILoggingAdapter log) =>
        Over(Make("FromStore", [typeof(string), typeof(string), typeof(StoreLocation)], commonName, storeName, location), requireMutualAuthentication, log);

    /// <summary>The source a setup was made from by <c>DotNettySslSetup.FromSource</c>; <c>null</c> for a setup made from a certificate.</summary>
    public static StockCertificateSource? Of(DotNettySslSetup setup, ILoggingAdapter log)
    {
        if (SourceType is null)
        {
            return null;
        }

        var source = typeof(DotNettySslSetup).GetFields(BindingFlags.Instance | BindingFlags.NonPublic)
            .FirstOrDefault(field => field.FieldType == SourceType)?.GetValue(setup);
        return source is null ? null : Over(source, setup.RequireMutualAuthentication, log);
    }

    /// <summary>
    /// The start-up check, as stock's: waits for the first look-up (at most 30 seconds, the source's own bound) and
    /// throws, with the source's words, when it found no certificate to use.
    /// </summary>
    public void Validate()
    {
        try
        {
            if (_validate is null)
            {
                _ = _current(_log);
            }
            else
            {
                _validate(_log).GetAwaiter().GetResult();
            }
        }
        catch (Exception e) when (e is InvalidOperationException or global::Akka.Configuration.ConfigurationException)
        {
            throw new InvalidOperationException(e.Message, e);
        }
    }

    /// <summary>The certificate the next handshake presents: the source's current pick, which it logs when it changes.</summary>
    /// <exception cref="InvalidOperationException">The source has no certificate in date: that handshake fails.</exception>
    public X509Certificate2 Current() =>
        _current(_log) ?? throw new InvalidOperationException("The certificate source gave no certificate.");

    private static object Make(string factory, Type[] parameters, params object?[] arguments)
    {
        var method = SourceType?.GetMethod(factory, BindingFlags.Static | BindingFlags.Public, parameters)
            ?? throw new PlatformNotSupportedException($"This Akka.NET has no {SourceTypeName}.{factory}: certificate sources need Akka.NET 1.5.75 or later.");
        try
        {
            return method.Invoke(null, arguments)!;
        }
        catch (TargetInvocationException e) when (e.InnerException is not null)
        {
            throw e.InnerException;
        }
    }

    private static StockCertificateSource Over(object source, bool requireMutualAuthentication, ILoggingAdapter log)
    {
        // Validation and the custom validator are judged by the core (TlsSettings); the settings made here only pick the
        // certificate, and the role they pick it for follows mutual authentication.
        var settings = SslSettingsFromSource!.Invoke(null, [source, false, requireMutualAuthentication, false, null])!;
        return new StockCertificateSource(settings, log);
    }
}
