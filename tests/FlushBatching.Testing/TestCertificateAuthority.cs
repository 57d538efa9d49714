using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace FlushBatching.Tests.Support;

/// <summary>
/// A certificate authority made at run time, which issues node certificates (server and client use) as PFX files.
/// A trusted one is added to the current user's Root store, which .NET's chain building trusts on Linux too, and
/// removed on dispose, only where that store is the test run's own (<see cref="IsolatedStore"/>); an untrusted one
/// stays out of every store, so its certificates fail chain validation. The PFX files go to the temporary folder,
/// which tools/isolated.sh makes the run's own too.
/// </summary>
public sealed class TestCertificateAuthority : IDisposable
{
    public const string Password = "test-password";

    /// <summary>The extended key usage of a TLS server's certificate.</summary>
    public static readonly Oid ServerAuthentication = new("1.3.6.1.5.5.7.3.1");

    /// <summary>The extended key usage of a TLS client's certificate.</summary>
    public static readonly Oid ClientAuthentication = new("1.3.6.1.5.5.7.3.2");

    private readonly RSA _key = RSA.Create(2048);
    private readonly X509Certificate2 _certificate;
    private readonly X509Certificate2? _trusted;
    private readonly List<string> _files = [];

    public TestCertificateAuthority(bool trusted)
    {
        if (trusted)
        {
            IsolatedStore.Require();
        }

        var request = new CertificateRequest($"CN=FlushBatching Test CA {Guid.NewGuid():N}", _key, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(true, false, 0, true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, true));
        _certificate = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(1));
        if (trusted)
        {
            _trusted = X509CertificateLoader.LoadCertificate(_certificate.Export(X509ContentType.Cert));
            using var store = new X509Store(StoreName.Root, StoreLocation.CurrentUser);
            store.Open(OpenFlags.ReadWrite);
            store.Add(_trusted);
        }
    }

    /// <summary>A node certificate for 127.0.0.1 and localhost, as nodes in these tests are reached by.</summary>
    public string IssueForLoopback() => Issue("localhost", IPAddress.Loopback);

    /// <summary>Issues a certificate whose subject is <paramref name="dnsName"/>, with those names, and writes it to a PFX file.</summary>
    /// <param name="dnsName">The subject's common name, and a DNS name of the certificate.</param>
    /// <param name="address">An IP address the certificate names too.</param>
    /// <param name="issuedAt">Its start of validity, an hour ago unless given: the later, the more recently it counts as issued.</param>
    /// <param name="usages">Its extended key usages: server and client authentication unless given.</param>
    /// <returns>The PFX file's path; its password is <see cref="Password"/>.</returns>
    public string Issue(string dnsName, IPAddress? address = null, DateTimeOffset? issuedAt = null, Oid[]? usages = null)
    {
        using var key = RSA.Create(2048);
        var request = new CertificateRequest($"CN={dnsName}", key, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        var names = new SubjectAlternativeNameBuilder();
        names.AddDnsName(dnsName);
        if (address is not null)
        {
            names.AddIpAddress(address);
        }

        request.CertificateExtensions.Add(names.Build());
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([.. usages ?? [ServerAuthentication, ClientAuthentication]], false));
        using var issued = request.Create(_certificate, issuedAt ?? DateTimeOffset.UtcNow.AddHours(-1), DateTimeOffset.UtcNow.AddHours(12), RandomNumberGenerator.GetBytes(8));
        using var withKey = issued.CopyWithPrivateKey(key);
        var path = Path.Combine(Path.GetTempPath(), $"flushbatching-{Guid.NewGuid():N}.pfx");
        File.WriteAllBytes(path, withKey.Export(X509ContentType.Pfx, Password));
        _files.Add(path);
        return path;
    }

    /// <summary>The same certificate as <paramref name="pfxPath"/> without its private key, as a PFX file.</summary>
    public string WithoutPrivateKey(string pfxPath)
    {
        using var full = X509CertificateLoader.LoadPkcs12FromFile(pfxPath, Password);
        using var publicOnly = X509CertificateLoader.LoadCertificate(full.Export(X509ContentType.Cert));
        var path = Path.Combine(Path.GetTempPath(), $"flushbatching-{Guid.NewGuid():N}.pfx");
        File.WriteAllBytes(path, publicOnly.Export(X509ContentType.Pfx, Password));
        _files.Add(path);
        return path;
    }

    public void Dispose()
    {
        if (_trusted is not null)
        {
            using var store = new X509Store(StoreName.Root, StoreLocation.CurrentUser);
            store.Open(OpenFlags.ReadWrite);
            store.Remove(_trusted);
            _trusted.Dispose();
        }

        foreach (var file in _files)
        {
            File.Delete(file);
        }

        _certificate.Dispose();
        _key.Dispose();
    }
}
