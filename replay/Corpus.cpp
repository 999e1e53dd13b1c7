#include "replay/Corpus.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

namespace bud::replay {

namespace {

std::optional<uint32_t> parse_u32(const std::string& s) {
  if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), ::isdigit)) return std::nullopt;
  return static_cast<uint32_t>(std::stoul(s));
}

std::string xml_escape(const std::string& s) {
  std::string o;
  for (unsigned char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&apos;";
        break;
      default:
        if (c < 0x20 && c != '\n' && c != '\t')
          o += ' ';
        else
          o += static_cast<char>(c);
    }
  }
  return o;
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

std::optional<Shard> shard_from_environment(std::string& error) {
  const char* i = std::getenv("TEST_SHARD_INDEX");
  const char* n = std::getenv("TEST_TOTAL_SHARDS");
  if (!i || !n) return std::nullopt;
  if (const char* status = std::getenv("TEST_SHARD_STATUS_FILE"); status && *status)
    std::ofstream(status, std::ios::app);
  return parse_shard(std::string(i) + "/" + n, error);
}

int CorpusResult::exit_code() const {
  bool bad = false, untestable = false;
  for (const auto& o : outcomes) {
    const int c = o.exit_code();
    if (c == 1 || o.verdict == Verdict::Diverged)
      bad = true;
    else if (c == 125)
      untestable = true;
  }
  return bad ? 1 : untestable ? 125 : 0;
}

std::optional<std::vector<std::string>> list_packets(const std::string& dir, std::string& error) {
  std::error_code ec;
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".bpk") out.push_back(e.path().string());
  }
  if (ec) {
    error = dir + ": " + ec.message();
    return std::nullopt;
  }
  std::sort(out.begin(), out.end());
  return out;
}

CorpusResult replay_corpus(const std::vector<std::string>& paths, const CorpusOptions& options) {
  CorpusResult r;
  r.total_packets = paths.size();
  std::vector<std::string> mine;
  for (size_t i = 0; i < paths.size(); ++i)
    if (i % options.shard.total == options.shard.index) mine.push_back(paths[i]);
  r.outcomes.resize(mine.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < mine.size(); i = next++)
      r.outcomes[i] = replay_file(mine[i], options.replay);
  };
  const unsigned jobs = std::max(1u, std::min<unsigned>(options.jobs, mine.size()));
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < jobs; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  return r;
}

std::string junit_xml(const CorpusResult& result, const std::string& suite_name) {
  size_t failures = 0, errors = 0, skipped = 0;
  for (const auto& o : result.outcomes) {
    if (o.verdict == Verdict::Reproduced || o.verdict == Verdict::NewSymptom) ++failures;
    if (o.verdict == Verdict::Diverged) ++errors;
    if (o.verdict == Verdict::Incompatible) ++skipped;
  }
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += "<testsuites>\n<testsuite name=\"" + xml_escape(suite_name) + "\" tests=\"" +
       std::to_string(result.outcomes.size()) + "\" failures=\"" + std::to_string(failures) +
       "\" errors=\"" + std::to_string(errors) + "\" skipped=\"" + std::to_string(skipped) +
       "\">\n";
  for (const auto& o : result.outcomes) {
    const std::string name = std::filesystem::path(o.packet).filename().string();
    x += "  <testcase classname=\"" + xml_escape(suite_name) + "\" name=\"" + xml_escape(name) +
         "\">\n";
    const std::string msg = xml_escape(o.message);
    const std::string v = verdict_name(o.verdict);
    switch (o.verdict) {
      case Verdict::Reproduced:
      case Verdict::NewSymptom:
        x += "    <failure type=\"" + v + "\" message=\"" + msg + "\"/>\n";
        break;
      case Verdict::Diverged:
        x += "    <error type=\"" + v + "\" message=\"" + msg + "\"/>\n";
        break;
      case Verdict::Incompatible:
        x += "    <skipped message=\"" + msg + "\"/>\n";
        break;
      default:
        break;
    }
    x += "    <system-out>verdict: " + v + "\n" + msg + "</system-out>\n  </testcase>\n";
  }
  x += "</testsuite>\n</testsuites>\n";
  return x;
}

}  // namespace bud::replay
