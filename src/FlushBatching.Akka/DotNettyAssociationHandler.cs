using System.Net;
using Akka.Actor;
using Akka.Event;
using Akka.Remote.Transport;
using DotNetty.Handlers.Tls;
using DotNetty.Transport.Channels;
using FlushBatching.Framing;
using Google.Protobuf;

namespace FlushBatching.Akka;

/// <summary>
/// The last handler of a <see cref="DotNettyBatchingTransport"/> channel: makes the channel's association handle once
/// the connection (and its TLS handshake) is up, turns inbound payloads into <see cref="InboundPayload"/>s once Akka
/// has registered its read handler, and reports the end of the association once.
/// </summary>
/// <remarks>State is touched on the channel's event loop, except the read-handler registration, which only turns
/// reads on.</remarks>
internal sealed class DotNettyAssociationHandler : ChannelHandlerAdapter
{
    private readonly DotNettyBatchingTransport _transport;
    private readonly Address? _remoteAddress;
    private readonly bool _tls;
    private readonly TaskCompletionSource<DotNettyAssociationHandle> _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private DotNettyAssociationHandle? _handle;
    private IHandleEventListener? _listener;
    private List<ByteString>? _held;
    private Exception? _failure;

    /// <param name="transport">The transport the channel belongs to.</param>
    /// <param name="remoteAddress">The peer's Akka address for an outbound channel; <c>null</c> for an inbound one.</param>
    /// <param name="tls">Whether the pipeline starts with TLS, so the handle waits for the handshake.</param>
    public DotNettyAssociationHandler(DotNettyBatchingTransport transport, Address? remoteAddress, bool tls)
    {
        _transport = transport;
        _remoteAddress = remoteAddress;
        _tls = tls;
    }

    /// <summary>Completes with the handle once the connection is up; fails if it ends before.</summary>
    public Task<DotNettyAssociationHandle> Ready => _ready.Task;

    public override void ChannelActive(IChannelHandlerContext context)
    {
        if (_tls)
        {
            // Reads are off until Akka registers its read handler, but the handshake needs them: ask for the first.
            context.Read();
        }
        else
        {
            MakeHandle(context);
        }

        context.FireChannelActive();
    }

    public override void UserEventTriggered(IChannelHandlerContext context, object evt)
    {
        if (evt is TlsHandshakeCompletionEvent { IsSuccessful: true })
        {
            MakeHandle(context);
        }
        else if (evt is TlsHandshakeCompletionEvent failed)
        {
            _failure = failed.Exception;
        }

        context.FireUserEventTriggered(evt);
    }

    public override void ChannelRead(IChannelHandlerContext context, object message)
    {
        var payload = (ByteString)message;
        if (_listener is { } listener)
        {
            listener.Notify(new InboundPayload(payload));
        }
        else
        {
            // TLS reads on its own around its handshake: hold what arrives until Akka listens.
            (_held ??= []).Add(payload);
        }
    }

    public override void ExceptionCaught(IChannelHandlerContext context, Exception exception)
    {
        _failure ??= exception;
        context.CloseAsync();
    }

    public override void ChannelInactive(IChannelHandlerContext context)
    {
        var info = Disassociation.Report(
            _transport.Log, _handle?.RemoteAddress ?? _remoteAddress ?? Address.AllSystems, context.Channel, _failure, _failure is InvalidFrameException);
        _ready.TrySetException(_failure ?? new InvalidAssociationException($"The connection {context.Channel} closed before it was set up."));
        _handle?.ReleaseQueued();
        _listener?.Notify(new Disassociated(info));
        context.FireChannelInactive();
    }

    private void MakeHandle(IChannelHandlerContext context)
    {
        var channel = context.Channel;
        var settings = _transport.Settings;
        var local = settings.LocalAddress(_transport.SchemeIdentifier, _transport.System.Name, (IPEndPoint)channel.LocalAddress);
        var remote = _remoteAddress ?? BatchingTransportSettings.PeerAddress(_transport.SchemeIdentifier, _transport.System.Name, (IPEndPoint)channel.RemoteAddress);
        _handle = new DotNettyAssociationHandle(local, remote, channel, settings.Connection.Framing.ByteOrder, settings.Connection.Metrics);

        // Reads stay off until Akka registers its read handler, so no frame arrives before someone hears it.
        _handle.ReadHandlerSource.Task.ContinueWith(
            (registered, state) =>
            {
                var readingChannel = (IChannel)state!;
                readingChannel.EventLoop.Execute(() =>
                {
                    _listener = registered.Result;
                    foreach (var held in _held ?? [])
                    {
                        _listener.Notify(new InboundPayload(held));
                    }

                    _held = null;
                    readingChannel.Configuration.AutoRead = true;
                    readingChannel.Read();
                });
            },
            channel,
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously | TaskContinuationOptions.OnlyOnRanToCompletion,
            TaskScheduler.Default);
        _ready.TrySetResult(_handle);
    }
}
