using Akka.Actor;
using Akka.Event;
using FlushBatching.Akka.Tests.Support;
using FlushBatching.Tests.Support;

namespace FlushBatching.Akka.Tests;

/// <summary>
/// TLS as stock Akka.Remote 1.5.74 does it, each case against a stock node: mutual authentication by default, host
/// names checked only when asked, untrusted chains refused with a log line saying why.
/// </summary>
public abstract partial class TransportSuite
{
    private static readonly TimeSpan RefusedWithin = TimeSpan.FromSeconds(3);

    [Fact]
    public async Task With_tls_messages_flow_under_the_ssl_scheme()
    {
        using var certificate = new SelfSignedCertificate();
        var tls = Tls(certificate.PfxPath, "suppress-validation = on");
        await using var a = Nodes.Start("client", TransportClass, tls);
        await using var b = Nodes.Start("server", TransportClass, tls);
        b.System.ActorOf(Props.Create<Echo>(), "echo");
        var echo = await b.Resolve(a, "echo");

        Assert.Equal("akka.ssl.tcp", b.Address.Protocol);
        Assert.Equal("secret", await echo.Ask<string>("secret", AskTimeout));
    }

    [Fact]
    public async Task Over_tls_a_stream_of_small_and_large_messages_arrives_all_in_order_and_byte_identical()
    {
        // Sizes log-uniform up to the frame limit: most are small enough to be combined before TLS encrypts them, the
        // rest pass through between them, so combining, pass-through order and TLS records are all crossed.
        using var certificate = new SelfSignedCertificate();
        var tls = Tls(certificate.PfxPath, "suppress-validation = on");
        await using var a = Nodes.Start("sender", TransportClass, tls);
        await using var b = Nodes.Start("receiver", TransportClass, tls);

        await SendInOrder(a, b, new Payloads(seed: 20261124, count: 20_000, maxSize: 128000 - EnvelopeRoom), "tls");
    }

    [Fact]
    public async Task A_client_that_rejects_the_certificate_gets_a_clear_error_and_no_association()
    {
        using var certificate = new SelfSignedCertificate();
        await using var a = Nodes.Start("client", TransportClass, Tls(certificate.PfxPath, "suppress-validation = off"));
        await using var b = Nodes.Start("server", TransportClass, Tls(certificate.PfxPath, "suppress-validation = on"));

        await AssertNoAssociation(a, b);
        await Poll.Until(
            () => a.Logs.Any(e => e.LogLevel() >= LogLevel.WarningLevel && e.ToString().Contains("certificate", StringComparison.OrdinalIgnoreCase)),
            "a warning naming the certificate on the client");
    }

    [LinuxTheory(IsolatedStore.Reason)]
    [MemberData(nameof(Peers))]
    public async Task Mutual_tls_with_default_settings_carries_messages_with_stock_both_ways(string client, string server)
    {
        using var authority = new TestCertificateAuthority(trusted: true);
        await using var a = Nodes.Start("client", ClassOf(client), Tls(authority.IssueForLoopback()));
        await using var b = Nodes.Start("server", ClassOf(server), Tls(authority.IssueForLoopback()));
        b.System.ActorOf(Props.Create<Echo>(), "echo");

        var echo = await b.Resolve(a, "echo");

        Assert.Equal("mutual", await echo.Ask<string>("mutual", AskTimeout));
    }

    [LinuxTheory(IsolatedStore.Reason)]
    [InlineData("under-test", "stock")]
    [InlineData("stock", "under-test")]
    public async Task A_tls_client_without_a_certificate_is_refused_by_default_and_served_with_mutual_authentication_off(string client, string server)
    {
        using var authority = new TestCertificateAuthority(trusted: true);
        var anonymous = Tls(authority.IssueForLoopback(), "require-mutual-authentication = off");

        await using (var a = Nodes.Start("client", ClassOf(client), anonymous))
        await using (var b = Nodes.Start("server", ClassOf(server), Tls(authority.IssueForLoopback())))
        {
            await AssertNoAssociation(a, b);
            if (server == "under-test")
            {
                await Poll.Until(() => b.Logs.Any(e => e.ToString().Contains("presented no certificate")), "the server to log that the client presented no certificate");
            }
        }

        await using (var a = Nodes.Start("client", ClassOf(client), anonymous))
        await using (var b = Nodes.Start("server", ClassOf(server), anonymous))
        {
            b.System.ActorOf(Props.Create<Echo>(), "echo");
            var echo = await b.Resolve(a, "echo");
            Assert.Equal("anonymous", await echo.Ask<string>("anonymous", AskTimeout));
        }
    }

    [LinuxTheory(IsolatedStore.Reason)]
    [InlineData("elsewhere.example", true, false)]
    [InlineData("elsewhere.example", false, true)]
    [InlineData("127.0.0.1", true, true)]
    public async Task Host_name_validation_refuses_a_stock_server_certificate_for_another_name_only_when_on(string serverName, bool validate, bool served)
    {
        using var authority = new TestCertificateAuthority(trusted: true);
        await using var a = Nodes.Start("client", TransportClass, Tls(authority.IssueForLoopback(), $"validate-certificate-hostname = {(validate ? "on" : "off")}"));
        var serverCertificate = serverName == "127.0.0.1" ? authority.IssueForLoopback() : authority.Issue(serverName);
        await using var b = Nodes.Start("server", Node.Stock, Tls(serverCertificate));
        b.System.ActorOf(Props.Create<Echo>(), "echo");

        if (served)
        {
            var echo = await b.Resolve(a, "echo");
            Assert.Equal("named", await echo.Ask<string>("named", AskTimeout));
        }
        else
        {
            await AssertNoAssociation(a, b);
            await Poll.Until(() => a.Logs.Any(e => e.LogLevel() >= LogLevel.WarningLevel && e.ToString().Contains("do not match")), "the client to log the name mismatch");
        }
    }

    [LinuxFact(IsolatedStore.Reason)]
    public async Task A_stock_server_certificate_from_an_untrusted_authority_is_refused_with_a_log_line_naming_why()
    {
        using var trusted = new TestCertificateAuthority(trusted: true);
        using var untrusted = new TestCertificateAuthority(trusted: false);
        await using var a = Nodes.Start("client", TransportClass, Tls(trusted.IssueForLoopback()));
        await using var b = Nodes.Start("server", Node.Stock, Tls(untrusted.IssueForLoopback()));

        await AssertNoAssociation(a, b);
        await Poll.Until(() => a.Logs.Any(e => e.LogLevel() >= LogLevel.WarningLevel && e.ToString().Contains("PartialChain")), "the client to log the untrusted chain");
    }

    [LinuxFact(IsolatedStore.Reason)]
    public async Task A_stock_client_certificate_from_an_untrusted_authority_is_refused_with_a_log_line_naming_why()
    {
        using var trusted = new TestCertificateAuthority(trusted: true);
        using var untrusted = new TestCertificateAuthority(trusted: false);
        await using var a = Nodes.Start("client", Node.Stock, Tls(untrusted.IssueForLoopback(), "suppress-validation = on"));
        await using var b = Nodes.Start("server", TransportClass, Tls(trusted.IssueForLoopback()));

        await AssertNoAssociation(a, b);
        await Poll.Until(() => b.Logs.Any(e => e.LogLevel() >= LogLevel.WarningLevel && e.ToString().Contains("PartialChain")), "the server to log the untrusted chain");
    }

    [Fact]
    public void A_certificate_without_its_private_key_stops_the_node_from_starting_naming_the_key()
    {
        using var authority = new TestCertificateAuthority(trusted: false);
        var publicOnly = authority.WithoutPrivateKey(authority.IssueForLoopback());

        var e = Assert.ThrowsAny<Exception>(() => Nodes.Start("keyless", TransportClass, Tls(publicOnly)));

        var messages = string.Join(" <- ", Chain(e).Select(inner => inner.Message));
        Assert.Contains("ssl.certificate.path", messages);
        Assert.Contains("private key", messages);
    }

    // The server has an echo actor (made here unless the test made it), so the lookup can fail only for want of an
    // association: a TLS refusal, not a missing actor.
    private static async Task AssertNoAssociation(Node client, Node server)
    {
        if (!await HasEcho(server))
        {
            server.System.ActorOf(Props.Create<Echo>(), "echo");
        }

        var selection = client.System.ActorSelection(new RootActorPath(server.Address) / "user" / "echo");
        await Assert.ThrowsAsync<ActorNotFoundException>(() => selection.ResolveOne(RefusedWithin));
    }

    private static async Task<bool> HasEcho(Node node)
    {
        try
        {
            await node.System.ActorSelection("/user/echo").ResolveOne(TimeSpan.FromSeconds(3));
            return true;
        }
        catch (ActorNotFoundException)
        {
            return false;
        }
    }

    private static string Tls(string pfxPath, string ssl = "") => $$"""
        enable-ssl = on
        ssl {
          certificate { path = {{Hocon.Quoted(pfxPath)}}, password = {{Hocon.Quoted(TestCertificateAuthority.Password)}} }
          {{ssl}}
        }
        """;
}
