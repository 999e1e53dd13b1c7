// Shard selection from the schedulers' variables (Slurm and LSF job arrays, Bazel, GitLab):
// each engine's numbering, and one clear error naming the variable for anything malformed,
// incomplete, out of range or in conflict.
#include "replay/ShardEnv.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>

using namespace bud::replay;

namespace {

using Vars = std::map<std::string, std::string>;

// The shard these variables select ("I/N"), "none", or "error: MESSAGE".
std::string select(const Vars& vars) {
  std::string error;
  auto getenv = [&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
  auto c = shard_from_environment(error, getenv);
  if (c) {
    CHECK(error.empty());
    return c->shard.text();
  }
  return error.empty() ? "none" : "error: " + error;
}

bool error_names(const Vars& vars, const std::string& variable) {
  const auto s = select(vars);
  INFO(s);
  return s.rfind("error: ", 0) == 0 && s.find(variable) != std::string::npos;
}

}  // namespace

TEST_CASE("no scheduler variables: no shard", "[replay][shards]") {
  CHECK(select({}) == "none");
  CHECK(select({{"CI_NODE_TOTAL", "1"}}) == "none");       // every GitLab job has it
  CHECK(select({{"LSB_JOBINDEX", "0"}}) == "none");        // LSF: not an array job
  CHECK(select({{"SLURM_ARRAY_TASK_ID", ""}}) == "none");  // empty is unset
}

TEST_CASE("Slurm job arrays: SLURM_ARRAY_TASK_ID with COUNT or MIN/MAX/STEP", "[replay][shards]") {
  CHECK(select({{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "8"}}) == "3/8");
  CHECK(select({{"SLURM_ARRAY_TASK_ID", "3"},
                {"SLURM_ARRAY_TASK_COUNT", "8"},
                {"SLURM_ARRAY_TASK_MIN", "0"},
                {"SLURM_ARRAY_TASK_MAX", "7"}}) == "3/8");
  // --array=1-4: task ids 1..4 are shards 0..3.
  CHECK(select({{"SLURM_ARRAY_TASK_ID", "1"},
                {"SLURM_ARRAY_TASK_MIN", "1"},
                {"SLURM_ARRAY_TASK_MAX", "4"}}) == "0/4");
  // --array=10-40:10
  CHECK(select({{"SLURM_ARRAY_TASK_ID", "30"},
                {"SLURM_ARRAY_TASK_MIN", "10"},
                {"SLURM_ARRAY_TASK_MAX", "40"},
                {"SLURM_ARRAY_TASK_STEP", "10"},
                {"SLURM_ARRAY_TASK_COUNT", "4"}}) == "2/4");
  CHECK(error_names({{"SLURM_ARRAY_TASK_ID", "3"}}, "SLURM_ARRAY_TASK_COUNT"));
  CHECK(error_names({{"SLURM_ARRAY_TASK_ID", "x3"}, {"SLURM_ARRAY_TASK_COUNT", "8"}},
                    "SLURM_ARRAY_TASK_ID='x3'"));
  CHECK(error_names({{"SLURM_ARRAY_TASK_ID", "8"}, {"SLURM_ARRAY_TASK_COUNT", "8"}},
                    "SLURM_ARRAY_TASK_ID=8"));
  // --array=1,3,7: not a range.
  CHECK(error_names({{"SLURM_ARRAY_TASK_ID", "3"},
                     {"SLURM_ARRAY_TASK_COUNT", "3"},
                     {"SLURM_ARRAY_TASK_MIN", "1"},
                     {"SLURM_ARRAY_TASK_MAX", "7"}},
                    "SLURM_ARRAY_TASK_COUNT=3"));
  CHECK(error_names({{"SLURM_ARRAY_TASK_ID", "5"},
                     {"SLURM_ARRAY_TASK_MIN", "2"},
                     {"SLURM_ARRAY_TASK_MAX", "8"},
                     {"SLURM_ARRAY_TASK_STEP", "2"}},
                    "SLURM_ARRAY_TASK_ID=5"));
}

TEST_CASE("LSF job arrays: LSB_JOBINDEX is 1-based", "[replay][shards]") {
  CHECK(select({{"LSB_JOBINDEX", "1"}, {"LSB_JOBINDEX_END", "4"}}) == "0/4");
  CHECK(select({{"LSB_JOBINDEX", "4"}, {"LSB_JOBINDEX_END", "4"}}) == "3/4");
  CHECK(select({{"LSB_JOBINDEX", "2"}, {"BUD_LSF_SHARDS", "5"}}) == "1/5");
  CHECK(select({{"LSB_JOBINDEX", "5"}, {"LSB_JOBINDEX_END", "7"}, {"LSB_JOBINDEX_STEP", "2"}}) ==
        "2/4");
  CHECK(error_names({{"LSB_JOBINDEX", "2"}}, "LSB_JOBINDEX_END"));
  CHECK(error_names({{"LSB_JOBINDEX", "5"}, {"LSB_JOBINDEX_END", "4"}}, "LSB_JOBINDEX=5"));
  CHECK(error_names({{"LSB_JOBINDEX", "2"}, {"LSB_JOBINDEX_END", "4"}, {"BUD_LSF_SHARDS", "3"}},
                    "BUD_LSF_SHARDS=3"));
  CHECK(error_names({{"LSB_JOBINDEX", "-1"}, {"LSB_JOBINDEX_END", "4"}}, "LSB_JOBINDEX='-1'"));
}

TEST_CASE("Bazel test sharding: TEST_SHARD_INDEX and TEST_TOTAL_SHARDS", "[replay][shards]") {
  CHECK(select({{"TEST_SHARD_INDEX", "0"}, {"TEST_TOTAL_SHARDS", "2"}}) == "0/2");
  CHECK(error_names({{"TEST_SHARD_INDEX", "1"}}, "TEST_TOTAL_SHARDS"));
  CHECK(error_names({{"TEST_SHARD_INDEX", "2"}, {"TEST_TOTAL_SHARDS", "2"}}, "TEST_SHARD_INDEX=2"));
}

TEST_CASE("GitLab parallel jobs: CI_NODE_INDEX is 1-based", "[replay][shards]") {
  CHECK(select({{"CI_NODE_INDEX", "1"}, {"CI_NODE_TOTAL", "3"}}) == "0/3");
  CHECK(select({{"CI_NODE_INDEX", "3"}, {"CI_NODE_TOTAL", "3"}}) == "2/3");
  CHECK(error_names({{"CI_NODE_INDEX", "0"}, {"CI_NODE_TOTAL", "3"}}, "CI_NODE_INDEX=0"));
  CHECK(error_names({{"CI_NODE_INDEX", "4"}, {"CI_NODE_TOTAL", "3"}}, "CI_NODE_INDEX=4"));
  CHECK(error_names({{"CI_NODE_INDEX", "2"}}, "CI_NODE_TOTAL"));
}

TEST_CASE("two schedulers: agreeing is fine, disagreeing is an error naming both",
          "[replay][shards]") {
  CHECK(select({{"SLURM_ARRAY_TASK_ID", "1"},
                {"SLURM_ARRAY_TASK_COUNT", "3"},
                {"CI_NODE_INDEX", "2"},
                {"CI_NODE_TOTAL", "3"}}) == "1/3");
  const Vars conflict = {{"SLURM_ARRAY_TASK_ID", "1"},
                         {"SLURM_ARRAY_TASK_COUNT", "3"},
                         {"TEST_SHARD_INDEX", "0"},
                         {"TEST_TOTAL_SHARDS", "2"}};
  CHECK(error_names(conflict, "SLURM_ARRAY_TASK_ID=1"));
  CHECK(error_names(conflict, "TEST_SHARD_INDEX=0"));
}

TEST_CASE("shard names sort in shard order", "[replay][shards]") {
  CHECK(Shard{3, 12}.file_stem() == "shard-0003-of-0012");
  std::string error;
  CHECK_FALSE(parse_shard("2/2", error));
  CHECK(error.find("2/2") != std::string::npos);
}
