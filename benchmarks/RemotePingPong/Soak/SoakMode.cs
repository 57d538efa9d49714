using System.Text.Json;
using Akka.Actor;

namespace RemotePingPong.Soak;

/// <summary>The soak from the command line: the run, its report, its JSON, and an exit code that says whether it held.</summary>
internal static class SoakMode
{
    public static async Task<int> RunAsync(
        RemoteEchoHost echoes, TransportUnderTest transport, bool tls, int clients, int payload, TimeSpan duration, TimeSpan cycle, TimeSpan sampleEvery, FileInfo? json)
    {
        try
        {
            var soak = await SoakRun.RunAsync(echoes, transport, tls, clients, payload, duration, cycle, sampleEvery);
            soak.Print();
            if (json is not null)
            {
                await File.WriteAllTextAsync(json.FullName, JsonSerializer.Serialize(soak, new JsonSerializerOptions { WriteIndented = true }));
                Console.WriteLine($"wrote {json.FullName}");
            }

            return soak.Failed ? 1 : 0;
        }
        catch (Exception e) when (e is TimeoutException or AskTimeoutException or ActorNotFoundException)
        {
            Console.Error.WriteLine($"error: {e.Message}");
            return 1;
        }
    }
}
