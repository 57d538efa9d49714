#if AKKA_1_5_75
using System.Net;
using System.Security.Cryptography.X509Certificates;
using Akka.Event;
using FlushBatching.Akka.Tests.Support;
using FlushBatching.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// What Akka.NET 1.5.75's certificate sources refuse, and how they fall back, read here as stock reads them. The
/// source's rules are the running Akka.NET's own, so these run on one stack; TransportSuite runs each source on all.
/// </summary>
public sealed class CertificateSourceTests
{
    [Theory]
    [InlineData(true, false)]
    [InlineData(false, true)]
    public void With_mutual_authentication_a_folder_whose_certificate_lacks_client_authentication_stops_the_node_as_it_stops_stock(bool mutual, bool starts)
    {
        using var authority = new TestCertificateAuthority(trusted: false);
        var folder = Directory.CreateTempSubdirectory("flushbatching-certificates-").FullName;
        try
        {
            File.Copy(authority.Issue("localhost", IPAddress.Loopback, usages: [TestCertificateAuthority.ServerAuthentication]), Path.Combine(folder, "server-only.pfx"));
            var tls = Tls(folder, $"require-mutual-authentication = {(mutual ? "on" : "off")}");

            var ours = StartsOrWhyNot(Node.BatchingTcp, tls);
            var stock = StartsOrWhyNot(Node.Stock, tls);

            Assert.True(stock is null == starts, $"stock: {stock ?? "started"}");
            Assert.True(ours is null == starts, $"FlushBatching: {ours ?? "started"}");
            if (!starts)
            {
                Assert.Contains("'ssl.certificate.path'", ours);
                Assert.Contains("client", ours, StringComparison.OrdinalIgnoreCase);
            }
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    [Fact]
    public void A_common_name_no_certificate_in_the_store_has_stops_the_node_naming_the_key_as_it_stops_stock()
    {
        var tls = $"""
            enable-ssl = on
            ssl.certificate.common-name = "no-such-node-{Guid.NewGuid():N}"
            """;

        var ours = StartsOrWhyNot(Node.BatchingTcp, tls);

        Assert.NotNull(StartsOrWhyNot(Node.Stock, tls));
        Assert.NotNull(ours);
        Assert.Contains("'ssl.certificate.common-name'", ours);
    }

    [Fact]
    public async Task A_folder_emptied_keeps_its_last_certificate_while_it_is_in_date_with_one_warning()
    {
        using var authority = new TestCertificateAuthority(trusted: false);
        var folder = Directory.CreateTempSubdirectory("flushbatching-certificates-").FullName;
        try
        {
            var file = Path.Combine(folder, "node.pfx");
            File.Copy(authority.IssueForLoopback(), file);
            using var first = X509CertificateLoader.LoadPkcs12FromFile(file, TestCertificateAuthority.Password);
            await using var node = Node.Start("emptied", Node.BatchingTcp, Tls(folder, "require-mutual-authentication = off"));
            File.Delete(file);

            // Past stock's 10 s between look-ups, two connections: both get the last certificate, and one WARNING says why.
            await Task.Delay(TimeSpan.FromSeconds(11));
            Assert.Equal(first.Thumbprint, await TlsProbe.ServerCertificateOf(node));
            await Task.Delay(TimeSpan.FromSeconds(1));
            Assert.Equal(first.Thumbprint, await TlsProbe.ServerCertificateOf(node));

            await Poll.Until(() => FallBacks(node) > 0, "the node to log that it keeps the previous certificate");
            Assert.Equal(1, FallBacks(node));
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    private static int FallBacks(Node node) =>
        node.Logs.Count(e => e.LogLevel() == LogLevel.WarningLevel && e.ToString().Contains("keeps using the previous certificate"));

    private static string? StartsOrWhyNot(string transportClass, string tls)
    {
        try
        {
            var node = Node.Start("refused", transportClass, tls);
            node.DisposeAsync().AsTask().GetAwaiter().GetResult();
            return null;
        }
        catch (Exception e)
        {
            return string.Join(" <- ", Chain(e).Select(inner => inner.Message));
        }
    }

    private static IEnumerable<Exception> Chain(Exception? e)
    {
        for (; e is not null; e = e.InnerException)
        {
            yield return e;
        }
    }

    private static string Tls(string folder, string ssl) => $$"""
        enable-ssl = on
        ssl {
          certificate { path = {{Hocon.Quoted(folder)}}, password = {{Hocon.Quoted(TestCertificateAuthority.Password)}} }
          {{ssl}}
        }
        """;
}
#endif
