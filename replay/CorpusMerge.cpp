#include "replay/CorpusMerge.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <numeric>

#include "replay/InputFile.h"

namespace bud::replay {

using json::Json;

namespace fs = std::filesystem;

int MergedCorpus::exit_code() const {
  return missing.empty() ? result.exit_code() : kExitInconsistent;
}

Json MergedCorpus::summary_json() const {
  Json j = Json::object();
  j["shards"] = shards;
  Json miss = Json::array();
  for (const auto& s : missing) miss.push_back(s.text());
  j["missing"] = std::move(miss);
  j["total_packets"] = result.total_packets;
  j["replayed"] = result.outcomes.size();
  Json verdicts = Json::object();
  for (int v = 0; v < kNumVerdicts; ++v) {
    const auto verdict = static_cast<Verdict>(v);
    verdicts[verdict_name(verdict)] =
        std::count_if(result.outcomes.begin(), result.outcomes.end(),
                      [&](const ReplayOutcome& o) { return o.verdict == verdict; });
  }
  j["verdicts"] = std::move(verdicts);
  Json bad = Json::array();
  for (const auto& o : result.outcomes) {
    if (o.exit_code() == 0) continue;
    bad.push_back({{"packet", fs::path(o.packet).filename().string()},
                   {"verdict", verdict_name(o.verdict)},
                   {"message", o.message}});
  }
  j["not_passing"] = std::move(bad);
  j["exit_code"] = exit_code();
  return j;
}

std::string MergedCorpus::junit() const { return junit_xml(result, "bud-replay", missing); }

std::optional<std::vector<std::string>> shard_result_files(const std::vector<std::string>& args,
                                                           bool allow_none, std::string& error) {
  std::vector<std::string> out;
  for (const auto& a : args) {
    std::error_code ec;
    // A merge that expects N shards runs even if no shard got as far as its results directory.
    if (allow_none && !fs::exists(a, ec)) continue;
    if (!fs::is_directory(a, ec)) {
      out.push_back(a);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(a, ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("shard-", 0) == 0 && e.path().extension() == ".json")
        found.push_back(e.path().string());
    }
    if (ec) {
      error = printable(a) + ": " + ec.message();
      return std::nullopt;
    }
    if (found.empty() && !allow_none) {
      error = printable(a) + ": no shard results (shard-*.json) in this directory";
      return std::nullopt;
    }
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  if (out.empty() && !allow_none) {
    error = "no shard results files given";
    return std::nullopt;
  }
  return out;
}

std::optional<std::vector<ShardFile>> read_shard_files(const std::vector<std::string>& paths,
                                                       std::string& error) {
  std::vector<ShardFile> out;
  for (const auto& p : paths) {
    auto file = InputFile::open(p, error);
    if (!file) return std::nullopt;
    // Results of a whole corpus shard are small; 256 MiB is far beyond any real one.
    if (file->size() > (256u << 20)) {
      error = file->name() + ": " + std::to_string(file->size()) +
              " bytes is too large for a shard's results file";
      return std::nullopt;
    }
    std::string text(file->size(), '\0');
    if (!file->read_at(0, {reinterpret_cast<uint8_t*>(text.data()), text.size()}, error))
      return std::nullopt;
    auto r = ShardResults::parse(text, printable(p), error);
    if (!r) return std::nullopt;
    out.push_back({p, std::move(*r)});
  }
  return out;
}

namespace {

// Window shards of one packet: its outcome as the serial replay gives it, once no shard is
// missing (else the missing ones are listed and there is no outcome).
std::optional<MergedCorpus> merge_windows(const std::map<uint32_t, const ShardFile*>& by_index,
                                          MergedCorpus& m, std::string& error) {
  std::vector<const WindowShardResult*> shards;
  double seconds = 0;
  for (uint32_t s = 0; s < m.shards; ++s) {
    auto it = by_index.find(s);
    if (it == by_index.end()) {
      m.missing.push_back({s, m.shards});
      continue;
    }
    shards.push_back(&*it->second->results.window_shard);
    seconds += shards.back()->seconds;
    m.files.push_back(it->second->path);
  }
  if (!m.missing.empty()) return m;
  auto o = merge_window_shards(shards, error);
  if (!o) {
    error = "window shards of " + printable(shards.front()->packet) + ": " + error;
    return std::nullopt;
  }
  m.result.total_packets = 1;
  m.result.outcomes.push_back(std::move(*o));
  m.result.corpus_index.push_back(0);
  m.result.seconds.push_back(seconds);
  return m;
}

}  // namespace

std::optional<MergedCorpus> merge_shards(const std::vector<ShardFile>& files,
                                         uint32_t expected_shards, std::string& error) {
  MergedCorpus m;
  if (files.empty()) {
    if (expected_shards == 0) {
      error = "no shard results to merge";
      return std::nullopt;
    }
    m.shards = expected_shards;
    for (uint32_t s = 0; s < m.shards; ++s) m.missing.push_back({s, m.shards});
    return m;
  }
  const ShardFile& first = files.front();
  m.shards = first.results.shard.total;
  m.result.total_packets = first.results.result.total_packets;
  std::map<uint32_t, const ShardFile*> by_index;
  for (const auto& f : files) {
    const auto& r = f.results;
    if (expected_shards && r.shard.total != expected_shards)
      error = printable(f.path) + " is shard " + r.shard.text() + " but " +
              std::to_string(expected_shards) + " shards were expected (--expect-shards)";
    else if (r.shard.total != m.shards)
      error = printable(f.path) + " is shard " + r.shard.text() + " but " + printable(first.path) +
              " is shard " + first.results.shard.text() +
              ": the files come from replays with different shard counts";
    else if (r.result.total_packets != m.result.total_packets)
      error = printable(f.path) + " counts " + std::to_string(r.result.total_packets) +
              " packets in the corpus but " + printable(first.path) + " counts " +
              std::to_string(m.result.total_packets) + ": the shards replayed different corpora";
    else if (auto [it, fresh] = by_index.emplace(r.shard.index, &f); !fresh)
      error = "shard " + r.shard.text() + " twice: " + printable(it->second->path) + " and " +
              printable(f.path);
    if (!error.empty()) return std::nullopt;
  }
  const bool windowed = first.results.window_shard.has_value();
  for (const auto& f : files) {
    const auto& w = f.results.window_shard;
    if (w.has_value() != windowed)
      error = printable(f.path) + (w ? " holds window shards of one packet" : " holds packets") +
              " but " + printable(first.path) + (windowed ? " holds window shards" : " packets") +
              ": the files come from different replays";
    else if (w && w->packet != first.results.window_shard->packet)
      error = printable(f.path) + " holds windows of " + printable(w->packet) + " but " +
              printable(first.path) + " of " + printable(first.results.window_shard->packet);
    if (!error.empty()) return std::nullopt;
  }
  if (windowed) return merge_windows(by_index, m, error);
  // Each shard must hold exactly its packets: corpus indices i with i % N == its index.
  std::vector<std::pair<uint64_t, std::pair<const ShardFile*, size_t>>> order;
  for (uint32_t s = 0; s < m.shards; ++s) {
    auto it = by_index.find(s);
    if (it == by_index.end()) {
      m.missing.push_back({s, m.shards});
      continue;
    }
    const auto& r = it->second->results.result;
    const uint64_t expected =
        m.result.total_packets > s ? (m.result.total_packets - s + m.shards - 1) / m.shards : 0;
    if (r.outcomes.size() != expected) {
      error = printable(it->second->path) + ": shard " + it->second->results.shard.text() +
              " holds " + std::to_string(r.outcomes.size()) + " packets, but a corpus of " +
              std::to_string(m.result.total_packets) + " gives it " + std::to_string(expected);
      return std::nullopt;
    }
    for (size_t k = 0; k < r.outcomes.size(); ++k) {
      if (r.corpus_index[k] % m.shards != s) {
        error = printable(it->second->path) + ": packet " + printable(r.outcomes[k].packet) +
                " (corpus index " + std::to_string(r.corpus_index[k]) + ") is not in shard " +
                it->second->results.shard.text();
        return std::nullopt;
      }
      order.push_back({r.corpus_index[k], {it->second, k}});
    }
    m.files.push_back(it->second->path);
  }
  std::sort(order.begin(), order.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i].first == order[i - 1].first) {
      error = printable(order[i].second.first->path) + ": corpus index " +
              std::to_string(order[i].first) + " appears twice in the shard";
      return std::nullopt;
    }
  for (const auto& [index, where] : order) {
    const auto& r = where.first->results.result;
    m.result.outcomes.push_back(r.outcomes[where.second]);
    m.result.corpus_index.push_back(index);
    m.result.seconds.push_back(r.seconds[where.second]);
  }
  return m;
}

}  // namespace bud::replay
