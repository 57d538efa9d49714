using BenchmarkDotNet.Running;

// Pick benchmarks by filter, such as: dotnet run -c Release --project benchmarks/FlushBatching.Benchmarks -- --filter '*WritePath*'
BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
