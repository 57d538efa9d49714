using Akka.Hosting;
using Microsoft.Extensions.Configuration;

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
    /// <summary>Runs Akka.Remote over FlushBatching's transport, with its defaults.</summary>
    public static AkkaConfigurationBuilder WithFlushBatching(this AkkaConfigurationBuilder builder) => builder.WithFlushBatching(new FlushBatchingOptions());

    /// <summary>
    /// Runs Akka.Remote over FlushBatching's transport, with <paramref name="options"/>; with
    /// <see cref="FlushBatchingOptions.Enabled"/> <c>false</c>, checks them and leaves the node's transport as it is.
    /// </summary>
    /// <remarks>
    /// To take the options from configuration, pass the section itself
    /// (<see cref="WithFlushBatching(AkkaConfigurationBuilder, IConfiguration)"/>): <c>Get&lt;FlushBatchingOptions&gt;()</c>
    /// returns <c>null</c> for a section that is missing, which this refuses rather than take as the defaults and switch
    /// the node on.
    /// </remarks>
    /// <exception cref="ArgumentNullException"><paramref name="options"/> is <c>null</c>.</exception>
    /// <exception cref="InvalidSettingException">A value is not allowed; the message names its key.</exception>
    public static AkkaConfigurationBuilder WithFlushBatching(this AkkaConfigurationBuilder builder, FlushBatchingOptions options)
    {
        ArgumentNullException.ThrowIfNull(builder);
        if (options is null)
        {
            throw new ArgumentNullException(nameof(options),
                "No FlushBatching options: a configuration section that is missing binds to null. Pass the section itself, WithFlushBatching(configuration.GetSection(\"FlushBatching\")), which leaves the node as it is when the section is missing, or WithFlushBatching() for the defaults.");
        }

        var config = options.ToConfig();
        return options.Enabled == false ? builder : builder.AddHocon(config, HoconAddMode.Prepend);
    }

    /// <summary>
    /// Runs Akka.Remote over FlushBatching's transport with the options bound from <paramref name="section"/> (as
    /// <see cref="FlushBatchingOptions"/> says), or, when the section is missing or empty, leaves the node's transport as
    /// it is, as without this call: deleting the section rolls a node back, never over.
    /// </summary>
    /// <exception cref="InvalidSettingException">A value is not allowed; the message names its key.</exception>
    /// <exception cref="InvalidOperationException">A value cannot be bound to its option's type (the binder's message names it).</exception>
    public static AkkaConfigurationBuilder WithFlushBatching(this AkkaConfigurationBuilder builder, IConfiguration section)
    {
        ArgumentNullException.ThrowIfNull(builder);
        ArgumentNullException.ThrowIfNull(section);
        return section.Get<FlushBatchingOptions>() is { } options && (section is not IConfigurationSection named || named.Exists())
            ? builder.WithFlushBatching(options)
            : builder;
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
