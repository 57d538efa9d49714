using Akka.Hosting;

namespace FlushBatching.Akka.Hosting;

/// <summary>
/// <c>WithFlushBatching</c> on Akka.Hosting's builder: switches Akka.Remote's TCP transport to FlushBatching's, in
/// place of the HOCON line <c>akka.remote.dot-netty.tcp.transport-class = "..."</c>.
/// </summary>
/// <remarks>
/// Composes with <c>WithRemoting</c> and <c>WithClustering</c> in either order: they write host, port, TLS and
/// cluster keys, this writes the transport class and the batching keys of the same section, which the transport
/// reads. The options are written with <see cref="HoconAddMode.Prepend"/>, so they win over HOCON added before
/// (an <c>AddHocon</c> that still names the stock transport, say); HOCON prepended after them wins over them.
/// </remarks>
public static class AkkaFlushBatchingHostingExtensions
{
    /// <summary>
    /// Runs Akka.Remote over FlushBatching's transport, with <paramref name="options"/> where given; with
    /// <see cref="FlushBatchingOptions.Enabled"/> <c>false</c>, checks them and leaves the node's transport as it is.
    /// </summary>
    /// <exception cref="InvalidSettingException">A value is not allowed; the message names its key.</exception>
    public static AkkaConfigurationBuilder WithFlushBatching(this AkkaConfigurationBuilder builder, FlushBatchingOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(builder);
        options ??= new FlushBatchingOptions();
        var config = options.ToConfig();
        return options.Enabled == false ? builder : builder.AddHocon(config, HoconAddMode.Prepend);
    }

    /// <summary>Runs Akka.Remote over FlushBatching's transport, with the options <paramref name="configure"/> sets.</summary>
    /// <exception cref="InvalidSettingException">A value is not allowed; the message names its key.</exception>
    public static AkkaConfigurationBuilder WithFlushBatching(this AkkaConfigurationBuilder builder, Action<FlushBatchingOptions> configure)
    {
        ArgumentNullException.ThrowIfNull(configure);
        var options = new FlushBatchingOptions();
        configure(options);
        return builder.WithFlushBatching(options);
    }
}
