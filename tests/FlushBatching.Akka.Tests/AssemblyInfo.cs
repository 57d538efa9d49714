// Real ActorSystems on real sockets: run one test at a time, so thread and socket counts and timings are the test's own.
[assembly: CollectionBehavior(DisableTestParallelization = true)]
