#include "load/matrix/MatrixShards.h"

#include <fstream>
#include <map>
#include <sstream>

#include "load/matrix/MatrixJson.h"

namespace bud::matrix {

namespace {

using json::Json;

constexpr const char* kFormat = "bud-matrix-shard";
constexpr int kVersion = 1;

struct ShardFile {
  std::string path;
  uint32_t index = 0, total = 0;
  Json header;
  std::vector<std::string> precisions;
  size_t task_count = 0;
  std::map<size_t, std::pair<std::string, Json>> tasks;  ///< task -> (name, cells)
};

workload::Result<ShardFile> read_shard(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return workload::Error{path + ": cannot read"};
  std::stringstream text;
  text << in.rdbuf();
  const Json j = Json::parse(text.str(), nullptr, false);
  if (j.is_discarded()) return workload::Error{path + ": not JSON"};
  if (!j.is_object() || j.value("format", "") != kFormat)
    return workload::Error{path + ": not a matrix shard file (no \"format\": \"" +
                           std::string(kFormat) + "\")"};
  if (j.value("version", 0) != kVersion)
    return workload::Error{path + ": shard file version " + j.value("version", Json()).dump() +
                           ", this bud reads " + std::to_string(kVersion)};
  ShardFile f;
  f.path = path;
  try {
    f.index = j.at("shard").at("index").get<uint32_t>();
    f.total = j.at("shard").at("total").get<uint32_t>();
    f.header = j.at("header");
    f.precisions = j.at("precisions").get<std::vector<std::string>>();
    f.task_count = j.at("task_count").get<size_t>();
    for (const auto& t : j.at("tasks")) {
      const size_t k = t.at("task").get<size_t>();
      if (k >= f.task_count || k % f.total != f.index)
        return workload::Error{path + ": task " + std::to_string(k) + " is not one of shard " +
                               std::to_string(f.index) + "/" + std::to_string(f.total) + "'s"};
      f.tasks[k] = {t.at("name").get<std::string>(), t.at("cells")};
    }
  } catch (const std::exception& e) {
    return workload::Error{path + ": " + e.what()};
  }
  if (f.total == 0 || f.index >= f.total)
    return workload::Error{path + ": shard " + std::to_string(f.index) + "/" +
                           std::to_string(f.total) + " out of range"};
  return f;
}

/// The first header member whose value differs ("" : none).
std::string differing_member(const Json& a, const Json& b) {
  for (const auto& [key, value] : a.items())
    if (!b.contains(key) || b.at(key) != value) return key;
  for (const auto& [key, value] : b.items())
    if (!a.contains(key)) return key;
  return {};
}

std::string shard_name(uint32_t index, uint32_t total) {
  return replay::Shard{index, total}.file_stem();
}

}  // namespace

workload::Result<ShardCells> run_shard(const Configuration& base, const Configuration& next,
                                       const MatrixSpec& spec, const replay::Shard& shard,
                                       const MatrixProgress& progress) {
  ShardCells out;
  const auto tasks = matrix_tasks(spec, base, next);
  for (size_t k = shard.index; k < tasks.size(); k += shard.total) {
    auto part = run_task(tasks[k], base, next, spec, progress);
    if (!part) return workload::Error{part.error()};
    out.emplace_back(k, std::move(part).value());
  }
  return out;
}

Json shard_json(const replay::Shard& shard, const Json& header,
                const std::vector<std::string>& precisions, size_t task_count,
                const std::vector<MatrixTask>& tasks, const ShardCells& cells) {
  Json j = Json::object();
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["shard"] = {{"index", shard.index}, {"total", shard.total}};
  j["header"] = header;
  j["precisions"] = precisions;
  j["task_count"] = task_count;
  Json list = Json::array();
  for (const auto& [k, m] : cells)
    list.push_back({{"task", k}, {"name", tasks.at(k).name}, {"cells", cells_json(m)}});
  j["tasks"] = std::move(list);
  return j;
}

workload::Result<MergedMatrix> merge_shards(const std::vector<std::string>& files,
                                            std::optional<uint32_t> expect_shards) {
  if (files.empty()) return workload::Error{"no shard files to merge"};
  std::vector<ShardFile> shards;
  for (const auto& path : files) {
    auto f = read_shard(path);
    if (!f) return workload::Error{f.error()};
    shards.push_back(std::move(f).value());
  }
  const ShardFile& first = shards.front();
  const uint32_t total = expect_shards.value_or(first.total);
  std::vector<const ShardFile*> by_index(total, nullptr);
  for (const auto& f : shards) {
    if (f.total != total)
      return workload::Error{f.path + ": shard of " + std::to_string(f.total) + ", expected " +
                             std::to_string(total) + " shards"};
    if (auto key = differing_member(first.header, f.header); !key.empty())
      return workload::Error{f.path + ": another matrix than " + first.path + " (\"" + key +
                             "\" differs)"};
    if (f.task_count != first.task_count || f.precisions != first.precisions)
      return workload::Error{f.path + ": another matrix than " + first.path +
                             " (its tasks differ)"};
    if (by_index[f.index])
      return workload::Error{f.path + ": " + shard_name(f.index, total) + " given twice (also " +
                             by_index[f.index]->path + ")"};
    by_index[f.index] = &f;
  }
  std::string missing;
  for (uint32_t i = 0; i < total; ++i) {
    if (by_index[i]) continue;
    std::string tasks;
    for (size_t k = i; k < first.task_count; k += total) {
      tasks += tasks.empty() ? "" : ", ";
      tasks += std::to_string(k);
    }
    missing += missing.empty() ? "" : "; ";
    missing += shard_name(i, total) +
               (tasks.empty() ? " (no tasks)" : " (tasks " + tasks + ")");
  }
  if (!missing.empty())
    return workload::Error{"missing shards, the matrix cannot decide without their cells: " +
                           missing};

  MergedMatrix out;
  out.header = first.header;
  out.shards = total;
  Matrix& m = out.matrix;
  m.precisions = first.precisions;
  try {
    m.mem_seeds = first.header.at("mem_seeds").get<std::vector<uint64_t>>();
  } catch (const std::exception& e) {
    return workload::Error{first.path + ": header.mem_seeds: " + e.what()};
  }
  for (size_t k = 0; k < first.task_count; ++k) {
    const ShardFile& f = *by_index[k % total];
    const auto it = f.tasks.find(k);
    if (it == f.tasks.end())
      return workload::Error{f.path + ": task " + std::to_string(k) +
                             " is missing (the shard did not finish)"};
    auto part = cells_from_json(it->second.second);
    if (!part)
      return workload::Error{f.path + ": task " + std::to_string(k) + " (" + it->second.first +
                             "): " + part.error()};
    append_task(m, std::move(part).value());
  }
  DecisionRule rule;
  try {
    const Json& r = first.header.at("rule");
    rule.floor_fraction = r.at("floor_fraction").get<double>();
    rule.rollout_limit = r.at("rollout_limit").get<double>();
    rule.snr_tolerance_db = r.at("snr_tolerance_db").get<double>();
    rule.top1_tolerance = r.at("top1_tolerance").get<double>();
  } catch (const std::exception& e) {
    return workload::Error{first.path + ": header.rule: " + e.what()};
  }
  decide(m, rule);
  return out;
}

}  // namespace bud::matrix
