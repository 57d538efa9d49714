using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using FlushBatching.Tcp.Tls;

namespace FlushBatching.Tcp;

/// <summary>
/// TLS for framed connections through <see cref="SslStream"/>: the certificate this side presents, whether both
/// sides must present one, and how the certificate a peer presents is judged.
/// </summary>
/// <remarks>
/// <para>
/// A listener needs <see cref="Certificate"/> with a usable private key. With <see cref="RequireMutualAuthentication"/>
/// a listener asks every client for a certificate and refuses a client that presents none or one that does not
/// validate, and a connector presents <see cref="Certificate"/>; without it a listener asks for none and a connector
/// presents none, as in Akka.Remote.
/// </para>
/// <para>
/// A peer's certificate is judged by <see cref="CertificateValidator"/> when one is set; otherwise its chain must
/// validate against the machine's trust store unless <see cref="SuppressValidation"/> is set, and a server's name
/// must match the host connected to when <see cref="ValidateHostname"/> is set. Revocation is not checked, as in
/// Akka.Remote: cluster nodes often have no route to a revocation list. A refusal fails the handshake with an
/// <see cref="AuthenticationException"/> whose message says why.
/// </para>
/// </remarks>
public sealed record TlsSettings
{
    /// <summary>Off: a listener serves clients without certificates unless asked to require them.</summary>
    internal const bool DefaultRequireMutualAuthentication = false;

    /// <summary>On: a connector checks the server's name, as <see cref="SslStream"/> does by default.</summary>
    internal const bool DefaultValidateHostname = true;

    private readonly X509Certificate2? _certificate;

    // A certificate this made (a re-import of a key SChannel cannot read): released by ReleaseOwned, when its user stops.
    private readonly X509Certificate2? _owned;

    // Set for settings made by FromCertificateSource: asked again for each handshake.
    private readonly Func<X509Certificate2>? _source;

    private TlsSettings(X509Certificate2? certificate, X509Certificate2? owned = null)
    {
        _certificate = certificate;
        _owned = owned;
    }

    private TlsSettings(Func<X509Certificate2> source) => _source = source;

    /// <summary>
    /// The certificate this side presents, with its private key; <c>null</c> for a connector that presents none.
    /// For settings made by <see cref="FromCertificateSource"/>, the source's current pick: each read asks the source,
    /// and each handshake reads it once.
    /// </summary>
    public X509Certificate2? Certificate => _source is null ? _certificate : _source();

    /// <summary>Whether this side has a certificate to present, fixed or from a source, without asking the source.</summary>
    internal bool HasCertificate => _source is not null || _certificate is not null;

    /// <summary>Whether a peer's certificate is accepted whatever its chain. For tests and self-signed clusters only.</summary>
    /// <value>The default is <c>false</c>.</value>
    public bool SuppressValidation { get; private init; }

    /// <summary>
    /// Whether both sides authenticate: a listener requires and validates a client certificate, and a connector
    /// presents <see cref="Certificate"/>. Off, a listener asks for none and a connector presents none.
    /// </summary>
    /// <value>The default is <c>false</c> here; the Akka transport's <c>ssl.require-mutual-authentication</c> defaults to on, as stock's does.</value>
    public bool RequireMutualAuthentication { get; private init; } = DefaultRequireMutualAuthentication;

    /// <summary>
    /// Whether a connector refuses a server certificate whose names do not match the host it connects to (or
    /// <see cref="TargetHost"/>). Off, only the chain is judged: cluster nodes often reach each other by address
    /// while their certificates name hosts, or share one certificate.
    /// </summary>
    /// <value>The default is <c>true</c> here; the Akka transport's <c>ssl.validate-certificate-hostname</c> defaults to off, as stock's does.</value>
    public bool ValidateHostname { get; private init; } = DefaultValidateHostname;

    /// <summary>
    /// The certificate a connector presents to the server: <see cref="Certificate"/> with
    /// <see cref="RequireMutualAuthentication"/>, none without it, as in Akka.Remote.
    /// </summary>
    public X509Certificate2? ClientCertificate => RequireMutualAuthentication ? Certificate : null;

    /// <summary>
    /// When set, decides alone whether a peer's certificate is accepted, in place of the chain and host-name checks:
    /// it is given the certificate (<c>null</c> when the peer presented none), its chain, the errors
    /// <see cref="SslStream"/> found, and the peer's endpoint as text.
    /// </summary>
    /// <value>The default is <c>null</c>.</value>
    public Func<X509Certificate2?, X509Chain?, SslPolicyErrors, string, bool>? CertificateValidator { get; private init; }

    /// <summary>The host name a connector expects in the server's certificate and sends as SNI; <c>null</c> uses the host it connects to.</summary>
    /// <value>The default is <c>null</c>.</value>
    public string? TargetHost { get; private init; }

    /// <summary>The TLS versions allowed; <see cref="SslProtocols.None"/> lets the operating system choose.</summary>
    /// <value>The default is <see cref="SslProtocols.None"/>.</value>
    public SslProtocols Protocols { get; private init; }

    /// <summary>TLS with the given certificate, which this side presents.</summary>
    /// <remarks>
    /// On Windows, a certificate whose private key lives in memory only (<c>CreateFromPem</c>, <c>CopyWithPrivateKey</c>,
    /// one loaded with <see cref="X509KeyStorageFlags.EphemeralKeySet"/>) cannot serve TLS: SChannel finds no key, and
    /// every handshake fails. So there, and only for such a key, the certificate is re-imported from its PKCS#12 form,
    /// which gives its key a container SChannel reads; a key kept elsewhere (a store, a key file, a hardware module) is
    /// used as it is. An import that fails (a service account with no loaded profile has no key set to import into)
    /// leaves the certificate as given.
    /// </remarks>
    /// <exception cref="ArgumentException">The certificate has no private key, or one that cannot be used.</exception>
    public static TlsSettings FromCertificate(X509Certificate2 certificate) => FromCertificate(certificate, warn: null);

    /// <summary><see cref="FromCertificate(X509Certificate2)"/>, telling <paramref name="warn"/> when a re-import failed.</summary>
    internal static TlsSettings FromCertificate(X509Certificate2 certificate, Action<string>? warn) =>
        FromCertificate(certificate, OperatingSystem.IsWindows() ? KeyLivesInMemory : static _ => false, ImportPkcs12, warn);

    /// <summary>
    /// <see cref="FromCertificate(X509Certificate2)"/>, re-importing the key with <paramref name="import"/> where
    /// <paramref name="needsContainer"/> says SChannel needs it (a test gives both, as a platform would), and telling
    /// <paramref name="warn"/> when the import failed and the certificate is used as given.
    /// </summary>
    internal static TlsSettings FromCertificate(
        X509Certificate2 certificate, Func<X509Certificate2, bool> needsContainer, Func<byte[], X509Certificate2> import, Action<string>? warn)
    {
        ArgumentNullException.ThrowIfNull(certificate);
        if (PrivateKeyProblem(certificate) is { } problem)
        {
            throw new ArgumentException($"The certificate {certificate.Subject} ({certificate.Thumbprint}) cannot serve TLS: {problem}.", nameof(certificate));
        }

        if (!needsContainer(certificate))
        {
            return new TlsSettings(certificate);
        }

        try
        {
            var imported = import(certificate.Export(X509ContentType.Pkcs12));
            return new TlsSettings(imported, owned: imported);
        }
        catch (CryptographicException e)
        {
            warn?.Invoke($"The certificate {certificate.Subject} ({certificate.Thumbprint}) keeps its private key in memory only, which SChannel cannot use, and importing it into a key container failed ({e.Message}); it is used as given, and TLS handshakes may fail. Load it from a file or a store instead, or with the machine-key-set flag for a service without a user profile.");
            return new TlsSettings(certificate);
        }
    }

    /// <summary>
    /// TLS whose certificate is asked of <paramref name="currentCertificate"/> for each handshake, so that a renewed
    /// certificate serves the next connection, on either side, without a restart; a connection already up keeps the
    /// certificate it was set up with.
    /// </summary>
    /// <remarks>
    /// The source runs on the connection's set-up path, once per handshake: it must return at once (keep the
    /// certificate in a field and renew it elsewhere), and must not dispose a certificate it has returned, which
    /// connections may still use. What it throws fails that handshake alone. Its certificates are used as given,
    /// with no re-import on Windows, so they must have a key SChannel can read.
    /// </remarks>
    /// <param name="currentCertificate">Returns the certificate to present now, with its private key.</param>
    public static TlsSettings FromCertificateSource(Func<X509Certificate2> currentCertificate)
    {
        ArgumentNullException.ThrowIfNull(currentCertificate);
        return new TlsSettings(currentCertificate);
    }

    /// <summary>TLS for a connector only: it validates servers and presents no certificate.</summary>
    public static TlsSettings ForClient() => new((X509Certificate2?)null);

    /// <summary>Loads the certificate from a PKCS#12 (PFX) file.</summary>
    /// <param name="path">The file.</param>
    /// <param name="password">Its password, or <c>null</c>.</param>
    /// <param name="flags">Where and how the private key is kept (Akka's <c>ssl.certificate.flags</c>).</param>
    /// <exception cref="InvalidSettingException">The file is missing, cannot be read with the password, or holds no usable private key.</exception>
    /// <remarks>
    /// On Windows, <see cref="X509KeyStorageFlags.EphemeralKeySet"/> is left out of <paramref name="flags"/>: SChannel
    /// cannot use a key kept in memory only, and every handshake would fail.
    /// </remarks>
    public static TlsSettings FromPfxFile(string path, string? password, X509KeyStorageFlags flags = X509KeyStorageFlags.DefaultKeySet) =>
        FromPfxFile(path, password, flags, static (path, password, flags) => new X509Certificate2(path, password, flags), OperatingSystem.IsWindows());

    /// <summary>
    /// <see cref="FromPfxFile(string, string?, X509KeyStorageFlags)"/>, loading the file with <paramref name="load"/> (a
    /// test gives one that fails as a platform's loader does), and without an ephemeral key where
    /// <paramref name="keyNeedsContainer"/> says SChannel needs one.
    /// </summary>
    internal static TlsSettings FromPfxFile(string path, string? password, X509KeyStorageFlags flags, Func<string, string?, X509KeyStorageFlags, X509Certificate2> load, bool keyNeedsContainer)
    {
        ArgumentNullException.ThrowIfNull(path);
        if (!File.Exists(path))
        {
            throw new InvalidSettingException(SettingKeys.CertificatePath, path, "the path of an existing PKCS#12 (.pfx) file");
        }

        X509Certificate2 certificate;
        try
        {
            certificate = load(path, password, keyNeedsContainer ? flags & ~X509KeyStorageFlags.EphemeralKeySet : flags);
        }
        catch (CryptographicException e)
        {
            throw new InvalidSettingException(SettingKeys.CertificatePath, path, $"a PKCS#12 (.pfx) file readable with the given password ({e.Message})", e);
        }
        catch (PlatformNotSupportedException e)
        {
            // macOS cannot keep a key as EphemeralKeySet: the flags name what this platform cannot do.
            throw new InvalidSettingException(SettingKeys.CertificatePath, path,
                $"a PKCS#12 (.pfx) file loaded with key storage flags this platform supports ({flags}: {e.Message})", e);
        }

        return PrivateKeyProblem(certificate) is { } problem
            ? throw new InvalidSettingException(SettingKeys.CertificatePath, path, $"a PKCS#12 (.pfx) file with a usable private key ({problem})")
            : new TlsSettings(certificate);
    }

    /// <summary>Finds the certificate by thumbprint in a certificate store.</summary>
    /// <exception cref="InvalidSettingException">The store cannot be opened on this platform (on Linux, LocalMachine has only
    /// Root and CertificateAuthority), no certificate with that thumbprint is in it, or it has no usable private key.</exception>
    public static TlsSettings FromStore(StoreName storeName, StoreLocation storeLocation, string thumbprint) =>
        FromStore(new X509Store(storeName, storeLocation), storeName.ToString(), storeLocation, thumbprint);

    /// <summary>
    /// Finds the certificate by thumbprint in the store of that name, any name the platform's <see cref="X509Store"/>
    /// takes, as stock Akka.Remote opens its <c>store-name</c>: a store of the system's own (<c>WebHosting</c> on Windows)
    /// or one an application made.
    /// </summary>
    /// <exception cref="InvalidSettingException">As <see cref="FromStore(StoreName, StoreLocation, string)"/>.</exception>
    public static TlsSettings FromStore(string storeName, StoreLocation storeLocation, string thumbprint)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(storeName);
        return FromStore(new X509Store(storeName, storeLocation), storeName, storeLocation, thumbprint);
    }

    private static TlsSettings FromStore(X509Store opened, string storeName, StoreLocation storeLocation, string thumbprint)
    {
        ArgumentNullException.ThrowIfNull(thumbprint);
        using var store = opened;
        try
        {
            store.Open(OpenFlags.ReadOnly);
        }
        catch (CryptographicException e)
        {
            throw new InvalidSettingException(SettingKeys.CertificateStoreName, storeName, $"a store this platform can open in {storeLocation} ({e.Message})", e);
        }

        var found = store.Certificates.Find(X509FindType.FindByThumbprint, thumbprint, validOnly: false);
        if (found.Count == 0)
        {
            throw new InvalidSettingException(SettingKeys.CertificateThumbprint, thumbprint, $"the thumbprint of a certificate in the {storeLocation}/{storeName} store");
        }

        return PrivateKeyProblem(found[0]) is { } problem
            ? throw new InvalidSettingException(SettingKeys.CertificateThumbprint, thumbprint, $"the thumbprint of a certificate with a usable private key ({problem})")
            : new TlsSettings(found[0]);
    }

    /// <summary>Returns a copy that accepts any peer certificate (<c>true</c>) or validates its chain (<c>false</c>).</summary>
    public TlsSettings WithSuppressValidation(bool suppress) => this with { SuppressValidation = suppress };

    /// <summary>Returns a copy that requires (<c>true</c>) or does without (<c>false</c>) a certificate from both sides.</summary>
    /// <exception cref="ArgumentException">Turning it on for settings with no certificate, nor source, to present.</exception>
    public TlsSettings WithRequireMutualAuthentication(bool require) => require && !HasCertificate
        ? throw new ArgumentException("Mutual authentication needs a certificate to present; these settings have none.", nameof(require))
        : this with { RequireMutualAuthentication = require };

    /// <summary>Returns a copy that refuses (<c>true</c>) or accepts (<c>false</c>) a server certificate for another host name.</summary>
    public TlsSettings WithValidateHostname(bool validate) => this with { ValidateHostname = validate };

    /// <summary>Returns a copy whose peer certificates are judged by <paramref name="validator"/> alone; <c>null</c> restores the built-in checks.</summary>
    public TlsSettings WithCertificateValidator(Func<X509Certificate2?, X509Chain?, SslPolicyErrors, string, bool>? validator) =>
        this with { CertificateValidator = validator };

    /// <summary>Returns a copy that expects <paramref name="targetHost"/> in the server's certificate.</summary>
    public TlsSettings WithTargetHost(string? targetHost) => this with { TargetHost = targetHost };

    /// <summary>Returns a copy that allows only <paramref name="protocols"/>.</summary>
    /// <exception cref="PlatformNotSupportedException">
    /// On macOS, TLS 1.3 alone: .NET's TLS there has no TLS 1.3, so every handshake would fail. Allow TLS 1.2 too, or
    /// leave the choice to the system (<see cref="SslProtocols.None"/>).
    /// </exception>
    public TlsSettings WithProtocols(SslProtocols protocols) => WithProtocols(protocols, tls13Available: !OperatingSystem.IsMacOS());

    /// <summary><see cref="WithProtocols(SslProtocols)"/> on a platform whose TLS has TLS 1.3 or, <paramref name="tls13Available"/> false, has not.</summary>
    internal TlsSettings WithProtocols(SslProtocols protocols, bool tls13Available) => !tls13Available && protocols == SslProtocols.Tls13
        ? throw new PlatformNotSupportedException(
            $"TLS 1.3 alone cannot serve on {System.Runtime.InteropServices.RuntimeInformation.OSDescription}: .NET's TLS on macOS has no TLS 1.3, so every handshake would fail. Allow {SslProtocols.Tls12} too, or {SslProtocols.None} to let the system choose.")
        : this with { Protocols = protocols };

    /// <summary>
    /// Judges the certificate a peer presented during a handshake, by <see cref="CertificateValidator"/> if set and
    /// otherwise by <see cref="SuppressValidation"/> and <see cref="ValidateHostname"/>. For transports that run
    /// their own <see cref="SslStream"/> (through <see cref="PeerJudge"/>), so that they judge peers exactly as framed
    /// connections do.
    /// </summary>
    /// <param name="certificate">What the peer presented; <c>null</c> if nothing.</param>
    /// <param name="chain">The chain <see cref="SslStream"/> built.</param>
    /// <param name="errors">What <see cref="SslStream"/> found wrong.</param>
    /// <param name="peer">The peer, as text for the refusal.</param>
    /// <returns><c>null</c> to accept; otherwise why the certificate is refused, in words for a log line.</returns>
    internal string? Judge(X509Certificate? certificate, X509Chain? chain, SslPolicyErrors errors, string peer)
    {
        var presented = certificate as X509Certificate2 ?? (certificate is null ? null : new X509Certificate2(certificate));
        if (CertificateValidator is { } validator)
        {
            return validator(presented, chain, errors, peer) ? null : $"the certificate validator refused the certificate of {peer}{Describe(presented)}";
        }

        if (presented is null)
        {
            return $"{peer} presented no certificate";
        }

        var nameMismatch = errors.HasFlag(SslPolicyErrors.RemoteCertificateNameMismatch);
        var otherErrors = errors & ~SslPolicyErrors.RemoteCertificateNameMismatch;
        var reasons = new List<string>();
        if (otherErrors != SslPolicyErrors.None && !SuppressValidation)
        {
            var statuses = chain?.ChainStatus.Where(s => s.Status != X509ChainStatusFlags.NoError)
                .Select(s => $"{s.Status}: {s.StatusInformation.Trim()}").ToList() ?? [];
            reasons.Add(statuses.Count > 0 ? $"its chain does not validate ({string.Join("; ", statuses)})" : $"it does not validate ({otherErrors})");
        }

        if (nameMismatch && ValidateHostname)
        {
            reasons.Add($"its names ({presented.GetNameInfo(X509NameType.DnsName, false)}) do not match the host connected to");
        }

        return reasons.Count == 0 ? null : $"the certificate of {peer} is refused: {string.Join(", and ", reasons)}{Describe(presented)}";
    }

    /// <summary>
    /// The name a client checks the server's certificate against: <see cref="TargetHost"/> if set, else the host it
    /// connected to (a name, or an address as text). Decided here once, for both stacks.
    /// </summary>
    internal string TargetHostFor(string connectedHost) => TargetHost ?? connectedHost;

    private static string Describe(X509Certificate2? certificate) =>
        certificate is null ? "" : $" (subject {certificate.Subject}, issuer {certificate.Issuer}, thumbprint {certificate.Thumbprint})";

    // What stock Akka.Remote 1.5.74 checks before it listens: a private key, and one this process can use.
    // Whether the certificate's private key lives in memory only, with no container SChannel can open: a CNG key that is
    // ephemeral. Keys from a store, a key file or a hardware module are persisted.
    [System.Runtime.Versioning.SupportedOSPlatform("windows")]
    private static bool KeyLivesInMemory(X509Certificate2 certificate)
    {
        using var rsa = certificate.GetRSAPrivateKey();
        using var ecdsa = rsa is null ? certificate.GetECDsaPrivateKey() : null;
        return rsa is RSACng { Key.IsEphemeral: true } || ecdsa is ECDsaCng { Key.IsEphemeral: true };
    }

    // A key set SChannel reads, deleted when the certificate is disposed (no PersistKeySet): ReleaseOwned does that.
    private static X509Certificate2 ImportPkcs12(byte[] pkcs12) =>
        new(pkcs12, (string?)null, X509KeyStorageFlags.DefaultKeySet);

    /// <summary>
    /// Releases what these settings made themselves (a re-imported key, and its container on Windows): for their user
    /// to call when it stops. The certificate given, or a source's, is its owner's, and stays.
    /// </summary>
    internal void ReleaseOwned() => _owned?.Dispose();

    private static string? PrivateKeyProblem(X509Certificate2 certificate)
    {
        if (!certificate.HasPrivateKey)
        {
            return "it has no private key";
        }

        try
        {
            using var rsa = certificate.GetRSAPrivateKey();
            using var ecdsa = certificate.GetECDsaPrivateKey();
            return rsa is null && ecdsa is null ? "its private key is neither RSA nor ECDSA, or cannot be accessed" : null;
        }
        catch (CryptographicException e)
        {
            return $"its private key cannot be accessed ({e.Message})";
        }
    }
}
