// bud-bench-remote: client side of tests/bench/remote_bench.sh.
//   bud-bench-remote ADDR latency [N]   round trips of reading one counter (ReadCounters) and of
//                                       `print gemm.active` (Execute): median and p99, in us
//   bud-bench-remote ADDR continue      wall seconds of one Continue(wait) and its cycles
//   bud-bench-remote ADDR shutdown
// BUD_BENCH_TOKEN_FILE names the token file for a TCP server.
// One JSON object per invocation on stdout.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "debugger/remote/RemoteClient.h"

using namespace bud::remote;
using Clock = std::chrono::steady_clock;

namespace {

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: bud-bench-remote ADDR latency [N] | continue | shutdown\n";
    return 2;
  }
  ClientOptions o;
  o.address = argv[1];
  o.name = "bud-bench-remote";
  if (const char* t = std::getenv("BUD_BENCH_TOKEN_FILE")) o.token_file = t;
  const std::string mode = argv[2];
  o.want_control = mode != "latency";
  std::string error;
  auto c = RemoteClient::connect(o, error);
  if (!c) {
    std::cerr << "bud-bench-remote: " << error << "\n";
    return 2;
  }
  if (mode == "latency") {
    const int n = argc > 3 ? std::atoi(argv[3]) : 2000;
    std::vector<double> counter, print;
    v1::ReadCountersRequest req;
    req.add_names("gemm.active");
    for (int i = 0; i < n + 100; ++i) {  // the first 100 warm up
      auto ctx = c->context();
      v1::Counters out;
      const auto t0 = Clock::now();
      if (!c->stub().ReadCounters(ctx.get(), req, &out).ok()) return 1;
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      if (i >= 100) counter.push_back(us);
    }
    for (int i = 0; i < n / 4; ++i) {
      v1::CommandReply r;
      const auto t0 = Clock::now();
      if (!c->execute("print gemm.active", r).ok()) return 1;
      print.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    std::printf(
        "{\"reads\":%d,\"counter_median_us\":%.1f,\"counter_p99_us\":%.1f,"
        "\"print_median_us\":%.1f,\"print_p99_us\":%.1f}\n",
        n, percentile(counter, 0.5), percentile(counter, 0.99), percentile(print, 0.5),
        percentile(print, 0.99));
    return 0;
  }
  if (mode == "continue") {
    auto ctx = c->context();
    v1::ContinueRequest req;
    req.set_wait(true);
    v1::CommandReply r;
    const auto t0 = Clock::now();
    const auto st = c->stub().Continue(ctx.get(), req, &r);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (!st.ok()) {
      std::cerr << status_text(st) << "\n";
      return 1;
    }
    std::printf("{\"seconds\":%.4f,\"cycle\":%llu}\n", s,
                static_cast<unsigned long long>(r.cycle()));
    return 0;
  }
  if (mode == "shutdown") {
    auto ctx = c->context();
    v1::ShutdownReply r;
    return c->stub().Shutdown(ctx.get(), v1::ShutdownRequest(), &r).ok() ? 0 : 1;
  }
  std::cerr << "bud-bench-remote: unknown mode " << mode << "\n";
  return 2;
}
