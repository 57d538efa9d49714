namespace FlushBatching.Fuzz;

/// <summary>A fuzz target found its own check broken: a finding, whatever the input.</summary>
public sealed class FuzzInvariantException(string message) : Exception(message);
