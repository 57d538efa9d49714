using System.Net;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Threading.Channels;
using FlushBatching.Akka;
using FlushBatching.Akka.DotNettyStack;
using FlushBatching.Tcp;

namespace FlushBatching.Fuzz;

/// <summary>
/// The DotNetty stack listening with TLS on loopback, as a node does, shared by every input of a run (AFL runs many
/// inputs in one process): each input is one peer that connects, sends its bytes and stops sending.
/// </summary>
internal sealed class TlsListenerUnderFuzz
{
    // Short, so that an input the listener waits on (a handshake begun and never finished) ends in about a second.
    private static readonly TimeSpan HandshakeBound = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan Margin = TimeSpan.FromSeconds(3);

    private static readonly Lazy<TlsListenerUnderFuzz> Shared = new(() => new TlsListenerUnderFuzz());

    private readonly Channel<object> _events = Channel.CreateUnbounded<object>();
    private readonly IPEndPoint _endpoint;

    private TlsListenerUnderFuzz()
    {
        var settings = ConnectionSettings.Default.WithConnectTimeout(HandshakeBound).WithTls(TlsSettings.FromCertificate(Certificate()));
        var stack = new DotNettyConnectionStack(settings, serverEventLoops: 1, clientEventLoops: 1, EventLoopKind.ThreadPool);
        _endpoint = stack.ListenAsync(new IPEndPoint(IPAddress.Loopback, 0), null, c => _events.Writer.TryWrite(c), e => _events.Writer.TryWrite(e))
            .GetAwaiter().GetResult();
    }

    public static TlsListenerUnderFuzz Instance => Shared.Value;

    /// <summary>
    /// One peer sends <paramref name="bytes"/> in pieces cut by <paramref name="seed"/> and stops sending. The listener
    /// must close the connection within the handshake bound, announce nothing (bytes from a peer that never completed a
    /// handshake cannot make a connection) and report one refusal of a kind <see cref="DotNettyListener"/> documents.
    /// </summary>
    public void Connect(ReadOnlyMemory<byte> bytes, byte seed)
    {
        FuzzTargets.Require(!_events.Reader.TryRead(out var late), $"the listener reported a connection it had already reported: {late}");

        using (var peer = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true })
        {
            peer.Connect(_endpoint);
            try
            {
                foreach (var piece in FuzzTargets.Segmented(bytes, seed))
                {
                    peer.Send(piece.Span);
                }

                peer.Shutdown(SocketShutdown.Send);
            }
            catch (SocketException)
            {
                // The listener closed first, on a prefix it refused: what it should do.
            }

            var buffer = new byte[16 * 1024];
            var reading = Task.Run(() =>
            {
                try
                {
                    while (peer.Receive(buffer) > 0)
                    {
                    }
                }
                catch (SocketException)
                {
                    // a reset ends it too
                }
            });
            FuzzTargets.Require(reading.Wait(HandshakeBound + Margin), $"the listener left the connection open past {HandshakeBound + Margin}");
        }

        var reported = _events.Reader.ReadAsync().AsTask();
        FuzzTargets.Require(reported.Wait(Margin), "the listener closed the connection without reporting why");
        switch (reported.Result)
        {
            case ITransportConnection connection:
                connection.Abort();
                throw new FuzzInvariantException("a connection was announced from bytes that never completed a TLS handshake");
            case Exception refusal:
                FuzzTargets.Require(IsDocumentedRefusal(refusal), $"the refusal is not one DotNettyListener documents: {refusal}");
                break;
        }
    }

    // The refusals DotNettyListener's remarks list, and nothing else: a set-up past its bound, or a drop whose cause is
    // bytes that are not TLS, a failed handshake, or a peer that closed first.
    private static bool IsDocumentedRefusal(Exception refusal)
    {
        if (refusal is TimeoutException)
        {
            return refusal.Message.Contains("handshake", StringComparison.Ordinal);
        }

        if (refusal.GetType() != typeof(IOException) || !refusal.Message.Contains("was dropped while setting up", StringComparison.Ordinal))
        {
            return false;
        }

        var cause = refusal.InnerException is AggregateException { InnerExceptions: [var only] } ? only : refusal.InnerException;
        return cause switch
        {
            global::DotNetty.Handlers.Tls.NotSslRecordException or AuthenticationException => true,
            IOException closed => closed.GetType() == typeof(IOException) && closed.InnerException is null,
            // .NET's own SslStream throws ArgumentOutOfRangeException from its ClientHello parser on some malformed
            // hellos (TlsFrameHelper.TryParseClientHello, .NET 10.0.12, found by this target): the runtime's defect,
            // contained as a refused handshake, so it is not counted against the stack.
            ArgumentOutOfRangeException inRuntime => inRuntime.StackTrace?.TrimStart().StartsWith("at System.Net.Security.", StringComparison.Ordinal) == true,
            _ => false,
        };
    }

    private static X509Certificate2 Certificate()
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=localhost", key, HashAlgorithmName.SHA256);
        using var made = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(1));
        return X509CertificateLoader.LoadPkcs12(made.Export(X509ContentType.Pfx), password: null);
    }
}
