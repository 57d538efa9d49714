using System.Security.Cryptography.X509Certificates;
using Akka.Configuration;
using Akka.Event;
using Akka.Remote.Transport.DotNetty;
using FlushBatching.Tcp;

namespace FlushBatching.Akka;

/// <summary>
/// Reads a transport section's <c>ssl</c> keys, or a <see cref="DotNettySslSetup"/> given in code, into the core's
/// <see cref="TlsSettings"/>, as stock 1.5.75 reads them (a folder, a common name or a source only on an Akka.NET that has
/// sources); a bad value names its key.
/// </summary>
internal static class TlsSection
{
    private const string SslPrefix = "ssl.";
    private const string CertificatePrefix = SslPrefix + "certificate.";
    private const string SuppressValidationKey = SslPrefix + "suppress-validation";
    private const string RequireMutualAuthenticationKey = SslPrefix + "require-mutual-authentication";
    private const string ValidateCertificateHostnameKey = SslPrefix + "validate-certificate-hostname";
    private const string PathKey = SslPrefix + SettingKeys.CertificatePath;
    private const string StoreNameKey = SslPrefix + SettingKeys.CertificateStoreName;
    private const string ThumbprintKey = SslPrefix + SettingKeys.CertificateThumbprint;
    private const string CommonNameKey = CertificatePrefix + "common-name";

    private static readonly Dictionary<string, X509KeyStorageFlags> KeyStorageFlags = new()
    {
        ["default-key-set"] = X509KeyStorageFlags.DefaultKeySet,
        ["exportable"] = X509KeyStorageFlags.Exportable,
        ["machine-key-set"] = X509KeyStorageFlags.MachineKeySet,
        ["persist-key-set"] = X509KeyStorageFlags.PersistKeySet,
        ["user-key-set"] = X509KeyStorageFlags.UserKeySet,
        ["user-protected"] = X509KeyStorageFlags.UserProtected,
    };

    public static TlsSettings Read(SectionReader read, DotNettySslSetup? sslSetup, ILoggingAdapter? log)
    {
        if (sslSetup is not null)
        {
            // As stock: a certificate given in code wins over the section, whose ssl keys are then ignored.
            if (!string.IsNullOrWhiteSpace(read.Text(PathKey)) || !string.IsNullOrWhiteSpace(read.Text(ThumbprintKey)))
            {
                log?.Warning("Both DotNettySslSetup and HOCON SSL configuration are present. DotNettySslSetup takes precedence and HOCON SSL settings will be ignored.");
            }

            TlsSettings fromSetup;
            if (StockCertificateSource.Of(sslSetup, log ?? NoLogger.Instance) is { } source)
            {
                fromSetup = FromSource(source, nameof(DotNettySslSetup) + ".FromSource", "(a certificate source)");
            }
            else
            {
                try
                {
                    fromSetup = TlsSettings.FromCertificate(sslSetup.Certificate, warn: log is null ? null : message => log.Warning("FlushBatching transport: {0}", message));
                }
                catch (ArgumentException e)
                {
                    throw new InvalidSettingException(nameof(DotNettySslSetup) + "." + nameof(DotNettySslSetup.Certificate), sslSetup.Certificate.Subject, $"a certificate with a usable private key ({e.Message})", e);
                }
            }

            return Judging(fromSetup, sslSetup.SuppressValidation, sslSetup.RequireMutualAuthentication, sslSetup.ValidateCertificateHostname, sslSetup.CustomValidator, log);
        }

        // Plain values first, so that a typo is named even when the certificate would not load either.
        var suppressValidation = read.Boolean(SuppressValidationKey);
        var requireMutualAuthentication = read.Boolean(RequireMutualAuthenticationKey);
        var validateHostname = read.Boolean(ValidateCertificateHostnameKey);
        // Stock reads the switch under both spellings: Akka's own reference.conf spelt it use-thumprint-over-file from 2018
        // to 2022, and configurations copied from those years' docs still do. Either one on takes the store.
        var byThumbprint = read.Boolean(CertificatePrefix + "use-thumbprint-over-file")
            || (read.Config.HasPath(CertificatePrefix + "use-thumprint-over-file") && read.Boolean(CertificatePrefix + "use-thumprint-over-file"));
        var path = read.Text(PathKey);
        // Stock 1.5.75's order: a common name wins over everything, then a folder at path unless the store is asked for
        // by thumbprint. Before 1.5.75 stock reads neither, and nor does this.
        var commonName = StockCertificateSource.Available ? read.Text(CommonNameKey).Trim() : "";
        TlsSettings tls;
        if (commonName.Length > 0)
        {
            var storeName = read.Text(StoreNameKey).Trim();
            var storeLocation = ParseStoreLocation(read.Text(CertificatePrefix + "store-location"));
            var source = StockCertificateSource.FromStore(commonName, storeName.Length == 0 ? nameof(StoreName.My) : storeName, storeLocation,
                requireMutualAuthentication, log ?? NoLogger.Instance);
            tls = FromSource(source, CommonNameKey, commonName);
        }
        else if (!byThumbprint && StockCertificateSource.Available && path.Length > 0 && Directory.Exists(path))
        {
            var password = read.Text(CertificatePrefix + "password");
            var flags = ParseFlags(read.Config.GetStringList(CertificatePrefix + "flags"));
            var source = StockCertificateSource.FromFolder(path, password.Length == 0 ? null : password, flags, requireMutualAuthentication, log ?? NoLogger.Instance);
            tls = FromSource(source, PathKey, path);
        }
        else if (byThumbprint)
        {
            var thumbprint = read.Text(ThumbprintKey);
            if (string.IsNullOrWhiteSpace(thumbprint))
            {
                throw new InvalidSettingException(ThumbprintKey, thumbprint, "a certificate thumbprint when use-thumbprint-over-file is on");
            }

            var storeName = read.Text(StoreNameKey).Trim();
            var storeLocation = ParseStoreLocation(read.Text(CertificatePrefix + "store-location"));
            tls = read.Apply(() => FromStore(storeName, storeLocation, thumbprint), StoreNameKey, ThumbprintKey);
        }
        else
        {
            var password = read.Text(CertificatePrefix + "password");
            var flags = ParseFlags(read.Config.GetStringList(CertificatePrefix + "flags"));
            tls = read.Apply(() => TlsSettings.FromPfxFile(path, password, flags), PathKey);
        }

        return Judging(tls, suppressValidation, requireMutualAuthentication, validateHostname, customValidator: null, log);
    }

    // A source is checked at start as stock checks it: its first look-up must find a certificate for the role, or the
    // node does not start, the key that named the source first in the error.
    private static TlsSettings FromSource(StockCertificateSource source, string key, string value)
    {
        try
        {
            source.Validate();
        }
        catch (InvalidOperationException e)
        {
            throw new InvalidSettingException(key, value, $"a source with a certificate in date, with its private key, allowed for this node's role ({e.Message})", e);
        }

        return TlsSettings.FromCertificateSource(source.Current);
    }

    // How a peer's certificate is judged, as stock does: the host connected to is the Akka address's host
    // (the connector passes it), and a custom validator from DotNettySslSetup decides alone, with Akka's logger.
    private static TlsSettings Judging(
        TlsSettings tls, bool suppressValidation, bool requireMutualAuthentication, bool validateHostname,
        CertificateValidationCallback? customValidator, ILoggingAdapter? log)
    {
        tls = tls.WithSuppressValidation(suppressValidation)
            .WithRequireMutualAuthentication(requireMutualAuthentication)
            .WithValidateHostname(validateHostname);
        var logger = log ?? NoLogger.Instance;
        return customValidator is null
            ? tls
            : tls.WithCertificateValidator((certificate, chain, errors, peer) => customValidator(certificate, chain, peer, errors, logger));
    }

    // Empty is My, a StoreName by its enum name (CertificateAuthority opens "CA"), and any other name the store of that
    // name, as stock passes store-name to X509Store whatever it is.
    private static TlsSettings FromStore(string storeName, StoreLocation storeLocation, string thumbprint)
    {
        if (string.IsNullOrEmpty(storeName))
        {
            return TlsSettings.FromStore(StoreName.My, storeLocation, thumbprint);
        }

        return Enum.TryParse<StoreName>(storeName, ignoreCase: true, out var name) && Enum.IsDefined(name) && !char.IsDigit(storeName[0])
            ? TlsSettings.FromStore(name, storeLocation, thumbprint)
            : TlsSettings.FromStore(storeName, storeLocation, thumbprint);
    }

    private static StoreLocation ParseStoreLocation(string value) => value switch
    {
        "current-user" => StoreLocation.CurrentUser,
        "local-machine" => StoreLocation.LocalMachine,
        _ => throw new InvalidSettingException(CertificatePrefix + "store-location", value, "current-user or local-machine"),
    };

    internal static X509KeyStorageFlags ParseFlags(IList<string>? names)
    {
        var flags = X509KeyStorageFlags.DefaultKeySet;
        foreach (var name in names ?? [])
        {
            flags |= KeyStorageFlags.TryGetValue(name, out var flag)
                ? flag
                : throw new InvalidSettingException(CertificatePrefix + "flags", name, $"a list of any of {string.Join(", ", KeyStorageFlags.Keys)}");
        }

        return flags;
    }
}
