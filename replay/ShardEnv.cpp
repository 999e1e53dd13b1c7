#include "replay/ShardEnv.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

namespace bud::replay {

std::string Shard::file_stem() const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "shard-%04u-of-%04u", index, total);
  return buf;
}

namespace {

std::optional<uint32_t> parse_u32(const std::string& s) {
  if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), ::isdigit)) return std::nullopt;
  return static_cast<uint32_t>(std::stoul(s));
}

// One scheduler variable: unset (or empty), a number, or malformed (error set).
struct Var {
  const char* name;
  bool set = false;
  uint32_t value = 0;
  std::string text() const { return std::string(name) + "=" + std::to_string(value); }
};

class Reader {
 public:
  Reader(const Getenv& getenv, std::string& error) : getenv_(getenv), error_(error) {}
  Var operator()(const char* name) {
    Var v{name};
    const char* raw = getenv_(name);
    if (!raw || !*raw || !error_.empty()) return v;
    const auto n = parse_u32(raw);
    if (!n)
      error_ = std::string(name) + "='" + raw + "' is not a shard number (0..999999999)";
    else
      v.set = true, v.value = *n;
    return v;
  }
  bool ok() const { return error_.empty(); }
  std::optional<ShardChoice> fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return std::nullopt;
  }

 private:
  const Getenv& getenv_;
  std::string& error_;
};

// A job array of `total` tasks numbered first, first + step, ...: the 0-based index of `id`.
std::optional<ShardChoice> array_task(Reader& env, const Var& id, uint32_t first, uint32_t step,
                                      uint32_t total, const std::string& engine) {
  if (id.value < first || (id.value - first) % step != 0)
    return env.fail(id.text() + " is not a task of the array (first task " + std::to_string(first) +
                    ", step " + std::to_string(step) + ")");
  const uint32_t index = (id.value - first) / step;
  if (total == 0 || index >= total)
    return env.fail(id.text() + " is task " + std::to_string(index) + " of an array of " +
                    std::to_string(total) + " tasks");
  return ShardChoice{{index, total}, engine + ": " + id.text()};
}

std::optional<ShardChoice> from_slurm(Reader& env) {
  const Var id = env("SLURM_ARRAY_TASK_ID");
  const Var count = env("SLURM_ARRAY_TASK_COUNT");
  const Var min = env("SLURM_ARRAY_TASK_MIN");
  const Var max = env("SLURM_ARRAY_TASK_MAX");
  const Var step = env("SLURM_ARRAY_TASK_STEP");
  if (!env.ok() || !id.set) return std::nullopt;
  const uint32_t first = min.set ? min.value : 0;
  const uint32_t st = step.set ? step.value : 1;
  if (st == 0) return env.fail(step.text() + " must be positive");
  if (max.set && max.value < first) return env.fail(max.text() + " is below " + min.text());
  const uint32_t spanned = max.set ? (max.value - first) / st + 1 : 0;
  if (count.set && max.set && count.value != spanned)
    return env.fail(count.text() + " but SLURM_ARRAY_TASK_MIN..MAX (" + std::to_string(first) +
                    ".." + std::to_string(max.value) + ", step " + std::to_string(st) + ") spans " +
                    std::to_string(spanned) +
                    " tasks: submit the array as one range (--array=0-N)");
  if (!count.set && !max.set)
    return env.fail(id.text() +
                    " is set without SLURM_ARRAY_TASK_COUNT or SLURM_ARRAY_TASK_MAX: the number "
                    "of shards is unknown");
  return array_task(env, id, first, st, count.set ? count.value : spanned, "Slurm");
}

std::optional<ShardChoice> from_lsf(Reader& env) {
  const Var id = env("LSB_JOBINDEX");
  const Var end = env("LSB_JOBINDEX_END");
  const Var step = env("LSB_JOBINDEX_STEP");
  const Var shards = env("BUD_LSF_SHARDS");
  // LSF sets LSB_JOBINDEX=0 in jobs that are not array jobs.
  if (!env.ok() || !id.set || id.value == 0) return std::nullopt;
  const uint32_t st = step.set ? step.value : 1;
  if (st == 0) return env.fail(step.text() + " must be positive");
  const uint32_t from_end = end.set && end.value >= 1 ? (end.value - 1) / st + 1 : 0;
  if (end.set && end.value == 0) return env.fail(end.text() + " must be at least 1");
  if (shards.set && end.set && shards.value != from_end)
    return env.fail(shards.text() + " but " + end.text() + " makes " + std::to_string(from_end) +
                    " tasks");
  if (!shards.set && !end.set)
    return env.fail(id.text() +
                    " is set without LSB_JOBINDEX_END or BUD_LSF_SHARDS: the number of shards is "
                    "unknown");
  return array_task(env, id, 1, st, shards.set ? shards.value : from_end, "LSF");
}

std::optional<ShardChoice> from_bazel(Reader& env, const Getenv& getenv) {
  const Var index = env("TEST_SHARD_INDEX");
  const Var total = env("TEST_TOTAL_SHARDS");
  if (!env.ok() || (!index.set && !total.set)) return std::nullopt;
  if (!index.set || !total.set)
    return env.fail(std::string(index.set ? total.name : index.name) + " is not set but " +
                    (index.set ? index.name : total.name) + " is");
  if (total.value == 0 || index.value >= total.value)
    return env.fail(index.text() + " is not below " + total.text());
  // Bazel asks sharding-aware runners to touch this file.
  if (const char* status = getenv("TEST_SHARD_STATUS_FILE"); status && *status)
    std::ofstream(status, std::ios::app);
  return ShardChoice{{index.value, total.value}, "Bazel: " + index.text() + ", " + total.text()};
}

std::optional<ShardChoice> from_gitlab(Reader& env) {
  const Var index = env("CI_NODE_INDEX");
  const Var total = env("CI_NODE_TOTAL");
  // GitLab sets CI_NODE_TOTAL=1 in every job; CI_NODE_INDEX only in `parallel:` jobs.
  if (!env.ok() || !index.set) return std::nullopt;
  if (!total.set) return env.fail(index.text() + " is set without CI_NODE_TOTAL");
  if (index.value == 0 || index.value > total.value)
    return env.fail(index.text() + " is not in 1.." + std::to_string(total.value) +
                    " (CI_NODE_TOTAL; GitLab numbers parallel jobs from 1)");
  return ShardChoice{{index.value - 1, total.value},
                     "GitLab: " + index.text() + ", " + total.text()};
}

}  // namespace

std::optional<Shard> parse_shard(const std::string& text, std::string& error) {
  const auto slash = text.find('/');
  auto i = parse_u32(text.substr(0, slash));
  auto n = slash == std::string::npos ? std::nullopt : parse_u32(text.substr(slash + 1));
  if (!i || !n || *n == 0 || *i >= *n) {
    error = "shard '" + text + "' must be I/N with 0 <= I < N";
    return std::nullopt;
  }
  return Shard{*i, *n};
}

std::optional<ShardChoice> shard_from_environment(std::string& error, const Getenv& getenv) {
  error.clear();
  Reader env(getenv, error);
  std::vector<ShardChoice> found;
  for (auto choice : {from_slurm(env), from_lsf(env), from_bazel(env, getenv), from_gitlab(env)}) {
    if (!env.ok()) return std::nullopt;
    if (choice) found.push_back(*choice);
  }
  if (found.empty()) return std::nullopt;
  for (const auto& other : found)
    if (!(other.shard == found.front().shard))
      return env.fail(found.front().source + " selects shard " + found.front().shard.text() +
                      " but " + other.source + " selects " + other.shard.text() +
                      ": unset one, or pass --shard I/N");
  return found.front();
}

std::optional<ShardChoice> shard_from_environment(std::string& error) {
  return shard_from_environment(error, [](const char* name) { return std::getenv(name); });
}

}  // namespace bud::replay
