// Scenarios share the machine's network setup and both cores: one at a time.
[assembly: CollectionBehavior(DisableTestParallelization = true)]
