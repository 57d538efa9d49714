using System.Net;
using System.Security.Authentication;
using DotNetty.Transport.Bootstrapping;
using DotNetty.Transport.Channels;
using DotNetty.Transport.Channels.Sockets;
using FlushBatching.Tcp;
using FlushBatching.Tcp.Tls;

namespace FlushBatching.Akka.DotNettyStack;

/// <summary>
/// The DotNetty stack's connector: opens channels on the client event loops, connecting and the TLS handshake together
/// within one bound, <c>connection-timeout</c>, and maps a failed handshake to the core's refusal.
/// </summary>
internal sealed class DotNettyConnector
{
    private readonly MultithreadEventLoopGroup _group;
    private readonly Func<IChannel, bool> _keepOrClose;

    /// <param name="group">The client event loops, sized by <c>client-socket-worker-pool</c>.</param>
    /// <param name="keepOrClose">Holds a new channel for the stack's stop, or closes it once the stack is stopping.</param>
    public DotNettyConnector(MultithreadEventLoopGroup group, Func<IChannel, bool> keepOrClose)
    {
        _group = group;
        _keepOrClose = keepOrClose;
    }

    public async Task<ITransportConnection> ConnectAsync(IPEndPoint endpoint, ConnectionSettings settings)
    {
        DotNettyConnection? connection = null;
        // The connection once the channel is made, which on a loaded machine can come after the bound has passed.
        var made = new TaskCompletionSource<DotNettyConnection>(TaskCreationOptions.RunContinuationsAsynchronously);
        var bootstrap = new Bootstrap()
            .Group(_group)
            .Channel<TcpSocketChannel>()
            // DotNetty's own connect timeout a second past the bound below, so that the bound (one for connecting and
            // the handshake together) is the one that fires; DotNetty's is only a backstop.
            .Option(ChannelOption.ConnectTimeout, settings.ConnectTimeout + TimeSpan.FromSeconds(1))
            .Handler(new ActionChannelInitializer<IChannel>(channel =>
            {
                connection = DotNettyPipeline.Build(channel, settings, targetHost: endpoint.Address.ToString());
                made.SetResult(connection);
                _keepOrClose(channel);
            }));
        DotNettyPipeline.ApplyChannelOptions(settings, (option, value) => bootstrap.Option(option, value), (option, value) => bootstrap.Option(option, value));

        // One bound for connecting and the handshake together, as the core's connector has. Past it, or on any failure,
        // the channel is closed: a handshake that succeeded after the bound must not leave a connection nobody owns.
        async Task<ITransportConnection> ConnectAndHandshakeAsync()
        {
            // On the thread pool, as the listener's bind: DotNetty's bootstrap awaits on the caller's context.
            await Task.Run(() => bootstrap.ConnectAsync(endpoint)).ConfigureAwait(false);
            try
            {
                await connection!.Ready.ConfigureAwait(false);
            }
            catch (Exception e) when (settings.Tls is not null && Refusal(e) is null && Wrapped<IOException>(e) is { } closed)
            {
                // Connected, then closed before the handshake completed: the peer ended it. DotNetty's TlsHandler may see
                // the close of a refusing peer before it has read the alert, and reports it bare or wrapped.
                throw new AuthenticationException(TlsHandshake.PeerClosedDuringHandshake, closed);
            }

            return connection;
        }

        var connecting = ConnectAndHandshakeAsync();
        try
        {
            return await connecting.WaitAsync(settings.ConnectTimeout).ConfigureAwait(false);
        }
        // The bound above; DotNetty's own (ConnectTimeoutException) only if this machine stalled past both.
        catch (Exception e) when (e is TimeoutException or ConnectTimeoutException)
        {
            // Aborted whenever it is made: a channel made after the bound (its bootstrap started late on a busy pool)
            // would otherwise stay open to a server that never answers its handshake, until the stack stops. A looped
            // run under load saw that on the dedicated loop: the connect gave up, and its socket stayed open.
            _ = made.Task.ContinueWith(static made => made.Result.Abort(), CancellationToken.None,
                TaskContinuationOptions.OnlyOnRanToCompletion, TaskScheduler.Default);
            // What ends after the bound is this method's alone: a late success is closed, a late failure observed.
            ObservedTasks.Observe(connecting);
            _ = connecting.ContinueWith(static late => late.Result.Abort(), CancellationToken.None,
                TaskContinuationOptions.OnlyOnRanToCompletion | TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
            throw SetupTimeouts.Connecting(endpoint, settings.ConnectTimeout, e);
        }
        catch (Exception e) when (Refusal(e) is { } refused)
        {
            // DotNetty's TlsHandler fails the channel with its error wrapped: the same refusal as the core's connector.
            connection?.Abort();
            throw new AuthenticationException($"The TLS handshake with {endpoint} failed: {refused.Message}", refused);
        }
        catch
        {
            connection?.Abort();
            throw;
        }
    }

    // The handshake's own refusal, however deep DotNetty wrapped it.
    private static AuthenticationException? Refusal(Exception? e) => Wrapped<AuthenticationException>(e);

    private static T? Wrapped<T>(Exception? e)
        where T : Exception
    {
        for (; e is not null; e = e.InnerException)
        {
            if (e is T found)
            {
                return found;
            }
        }

        return null;
    }
}
