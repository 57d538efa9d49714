using System.Net.Sockets;
using Akka.Actor;
using Akka.Event;
using Akka.Remote.Transport;
using FlushBatching.Framing;

namespace FlushBatching.Akka;

/// <summary>How an association's end is reported: one log line at most, and the reason Akka is told.</summary>
internal static class Disassociation
{
    /// <summary>Logs why the association ended, unless it ended in order, and says what to tell Akka.</summary>
    /// <param name="log">The transport's log.</param>
    /// <param name="remote">The peer's Akka address.</param>
    /// <param name="connection">The connection, as text naming both endpoints.</param>
    /// <param name="reason">What ended it: <c>null</c> for an orderly close.</param>
    public static DisassociateInfo Report(ILoggingAdapter log, Address remote, object connection, Exception? reason)
    {
        // Over TLS the sockets stack reads through SslStream, which wraps the socket's error in an IOException: the same
        // end is reported the same way, plain or TLS.
        var cause = reason is IOException { InnerException: SocketException socket } ? socket : reason;
        switch (cause)
        {
            case null:
                return DisassociateInfo.Unknown;
            case InvalidFrameException:
                log.Warning("Dropped association [{0}] ({1}): bad frame from the peer: {2}", remote, connection, cause.Message);
                return DisassociateInfo.Unknown;
            case SocketException { SocketErrorCode: SocketError.OperationAborted }:
                // This node's own abort (shutdown, a silent peer's bound), not the peer's doing.
                log.Debug("Association [{0}] ({1}) was aborted by this node", remote, connection);
                return DisassociateInfo.Shutdown;
            case SocketException { SocketErrorCode: SocketError.ConnectionReset or SocketError.ConnectionAborted }:
                log.Info("Association [{0}] ({1}) was reset by the peer", remote, connection);
                return DisassociateInfo.Shutdown;
            default:
                log.Warning("Association [{0}] ({1}) ended on an error: {2}", remote, connection, cause.Message);
                return DisassociateInfo.Unknown;
        }
    }
}
