// A Google Benchmark program of sslperf's own (scripts/capture-import-samples.sh builds and runs it): memcpy of two
// sizes on 1 and 2 threads, and a loop that counts items, so the importer's generic rows are tested on real Google
// Benchmark JSON that is not bssl_bench's.
#include <benchmark/benchmark.h>
#include <cstring>
#include <vector>

static void BM_memcpy(benchmark::State& state) {
  std::vector<char> src(state.range(0), 'x'), dst(state.range(0));
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), state.range(0));
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(state.range(0)));
}
BENCHMARK(BM_memcpy)->Arg(64)->Arg(4096)->Threads(1)->Threads(2);

static void BM_vector_push_back(benchmark::State& state) {
  for (auto _ : state) {
    std::vector<int> v;
    for (int i = 0; i < 64; i++) v.push_back(i);
    benchmark::DoNotOptimize(v.data());
  }
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_vector_push_back);

BENCHMARK_MAIN();
