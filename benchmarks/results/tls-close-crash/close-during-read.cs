// A TLS pair on loopback, closed (by default) 3,000 times while the server sends: the client reads in a loop, and, with
// "shutdown", calls SslStream.ShutdownAsync (TLS's close_notify) while that read goes on; with "none" it does not.
// What stop 87's CI run died of, outside the project: run it with `dotnet run close-during-read.cs -- 3000 shutdown`.
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

using var key = RSA.Create(2048);
var request = new CertificateRequest("CN=localhost", key, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
using var made = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(1));
var certificate = X509CertificateLoader.LoadPkcs12(made.Export(X509ContentType.Pfx), null);
var listener = new TcpListener(IPAddress.Loopback, 0);
listener.Start();
var rounds = int.Parse(args.Length > 0 ? args[0] : "3000");
var mode = args.Length > 1 ? args[1] : "shutdown";
var random = new Random(1);
for (var round = 0; round < rounds; round++)
{
    using var clientTcp = new TcpClient();
    var accept = listener.AcceptTcpClientAsync();
    await clientTcp.ConnectAsync(IPAddress.Loopback, ((IPEndPoint)listener.LocalEndpoint).Port);
    using var serverTcp = await accept;
    var server = new SslStream(serverTcp.GetStream());
    var client = new SslStream(clientTcp.GetStream(), false, (_, _, _, _) => true);
    await Task.WhenAll(
        server.AuthenticateAsServerAsync(new SslServerAuthenticationOptions { ServerCertificate = certificate }),
        client.AuthenticateAsClientAsync(new SslClientAuthenticationOptions { TargetHost = "localhost" }));
    var stop = false;
    var sending = Task.Run(async () =>
    {
        var data = new byte[100];
        try
        {
            while (!Volatile.Read(ref stop))
            {
                await server.WriteAsync(data);
            }
        }
        catch (Exception)
        {
        }
    });
    var reading = Task.Run(async () =>
    {
        var buffer = new byte[64];
        try
        {
            while (await client.ReadAsync(buffer) > 0)
            {
            }
        }
        catch (Exception)
        {
        }
    });
    await Task.Delay(random.Next(0, 3));
    if (mode == "shutdown")
    {
        try
        {
            await client.ShutdownAsync();
        }
        catch (Exception)
        {
        }
    }

    Volatile.Write(ref stop, true);
    serverTcp.Client.Shutdown(SocketShutdown.Both);
    await sending;
    await reading;
    server.Dispose();
    client.Dispose();
    if (round % 500 == 0)
    {
        Console.WriteLine($"round {round}");
    }
}

Console.WriteLine("done");
