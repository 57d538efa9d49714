namespace RemotePingPong;

/// <summary>One combination of the three batching keys at one client count: its median msgs/sec and ratio to stock.</summary>
internal sealed record SweepResult(string Transport, string MaxPendingWrites, string MaxPendingBytes, string FlushInterval, int Clients, double MsgsPerSec, double StockMsgsPerSec, double Ratio);
