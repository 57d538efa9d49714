using BenchmarkDotNet.Running;

// dotnet run -c Release --project benchmarks/FlushBatching.Akka.Benchmarks -- --filter '*'
BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
