using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace FlushBatching.Tests.Support;

/// <summary>A certificate for localhost made at run time and written to a PFX file with a password.</summary>
public sealed class SelfSignedCertificate : IDisposable
{
    public const string Password = "test-password";

    public SelfSignedCertificate()
    {
        using var key = RSA.Create(2048);
        var request = new CertificateRequest("CN=localhost", key, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        var names = new SubjectAlternativeNameBuilder();
        names.AddDnsName("localhost");
        names.AddIpAddress(IPAddress.Loopback);
        request.CertificateExtensions.Add(names.Build());
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid("1.3.6.1.5.5.7.3.1")], false));
        using var certificate = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(1));
        PfxPath = Path.Combine(Path.GetTempPath(), $"flushbatching-{Guid.NewGuid():N}.pfx");
        File.WriteAllBytes(PfxPath, certificate.Export(X509ContentType.Pfx, Password));
    }

    public string PfxPath { get; }

    public void Dispose() => File.Delete(PfxPath);
}
