using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;

namespace FlushBatching.Tcp;

/// <summary>
/// TLS for framed connections through <see cref="System.Net.Security.SslStream"/>: the certificate a
/// listener presents, and how a connector validates the certificate it is shown.
/// </summary>
/// <remarks>
/// A listener needs <see cref="Certificate"/> with its private key. A connector validates the server's
/// certificate against the machine's trust store and the host name unless <see cref="SuppressValidation"/>
/// is set, which accepts any certificate and is meant for tests and self-signed clusters. Revocation is not
/// checked, as in Akka.Remote: cluster nodes often have no route to a revocation list.
/// </remarks>
public sealed class TlsSettings
{
    private TlsSettings(X509Certificate2? certificate, bool suppressValidation, string? targetHost, SslProtocols protocols)
    {
        Certificate = certificate;
        SuppressValidation = suppressValidation;
        TargetHost = targetHost;
        Protocols = protocols;
    }

    /// <summary>The certificate a listener presents (with its private key); <c>null</c> for a connector-only setup.</summary>
    public X509Certificate2? Certificate { get; }

    /// <summary>Whether a connector accepts any server certificate. Off by default; say so explicitly to turn it on.</summary>
    /// <value>The default is <c>false</c>.</value>
    public bool SuppressValidation { get; }

    /// <summary>The host name a connector expects in the server's certificate; <c>null</c> uses the host it connects to.</summary>
    /// <value>The default is <c>null</c>.</value>
    public string? TargetHost { get; }

    /// <summary>The TLS versions allowed; <see cref="SslProtocols.None"/> lets the operating system choose.</summary>
    /// <value>The default is <see cref="SslProtocols.None"/>.</value>
    public SslProtocols Protocols { get; }

    /// <summary>TLS with the given certificate, which must have its private key to serve as a listener.</summary>
    public static TlsSettings FromCertificate(X509Certificate2 certificate) =>
        new(certificate ?? throw new ArgumentNullException(nameof(certificate)), false, null, SslProtocols.None);

    /// <summary>TLS for a connector only: it validates servers and presents no certificate.</summary>
    public static TlsSettings ForClient() => new(null, false, null, SslProtocols.None);

    /// <summary>Loads the certificate from a PKCS#12 (PFX) file.</summary>
    /// <param name="path">The file.</param>
    /// <param name="password">Its password, or <c>null</c>.</param>
    /// <param name="flags">Where and how the private key is kept (Akka's <c>ssl.certificate.flags</c>).</param>
    /// <exception cref="InvalidSettingException">The file is missing or cannot be read with the password.</exception>
    public static TlsSettings FromPfxFile(string path, string? password, X509KeyStorageFlags flags = X509KeyStorageFlags.DefaultKeySet)
    {
        ArgumentNullException.ThrowIfNull(path);
        if (!File.Exists(path))
        {
            throw new InvalidSettingException("ssl.certificate.path", path, "the path of an existing PKCS#12 (.pfx) file");
        }

        try
        {
            var certificate = new X509Certificate2(path, password, flags);
            return FromCertificate(certificate);
        }
        catch (System.Security.Cryptography.CryptographicException e)
        {
            throw new InvalidSettingException("ssl.certificate.path", path, $"a PKCS#12 (.pfx) file readable with the given password ({e.Message})", e);
        }
    }

    /// <summary>Finds the certificate by thumbprint in a certificate store.</summary>
    /// <exception cref="InvalidSettingException">No certificate with that thumbprint is in the store.</exception>
    public static TlsSettings FromStore(StoreName storeName, StoreLocation storeLocation, string thumbprint)
    {
        ArgumentNullException.ThrowIfNull(thumbprint);
        using var store = new X509Store(storeName, storeLocation);
        store.Open(OpenFlags.ReadOnly);
        var found = store.Certificates.Find(X509FindType.FindByThumbprint, thumbprint, validOnly: false);
        if (found.Count == 0)
        {
            throw new InvalidSettingException("ssl.certificate.thumbprint", thumbprint, $"the thumbprint of a certificate in the {storeLocation}/{storeName} store");
        }

        return FromCertificate(found[0]);
    }

    /// <summary>Returns a copy that accepts any server certificate (<c>true</c>) or validates it (<c>false</c>).</summary>
    public TlsSettings WithSuppressValidation(bool suppress) => new(Certificate, suppress, TargetHost, Protocols);

    /// <summary>Returns a copy that expects <paramref name="targetHost"/> in the server's certificate.</summary>
    public TlsSettings WithTargetHost(string? targetHost) => new(Certificate, SuppressValidation, targetHost, Protocols);

    /// <summary>Returns a copy that allows only <paramref name="protocols"/>.</summary>
    public TlsSettings WithProtocols(SslProtocols protocols) => new(Certificate, SuppressValidation, TargetHost, protocols);
}
