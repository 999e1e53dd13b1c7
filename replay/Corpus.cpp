#include "replay/Corpus.h"

#include <fcntl.h>
#include <poll.h>
#include <libxml/xmlwriter.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <thread>

#include "replay/Framing.h"

// ASan and TSan reserve terabytes of shadow address space: an RLIMIT_AS would kill every replay.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BUD_SHADOW_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define BUD_SHADOW_SANITIZER 1
#endif
#endif

namespace bud::replay {

namespace {

// The outcome crosses the pipe from the child as length-prefixed fields (the run report stays
// behind: corpus mode does not use it). One field list, transfer(), serves both directions.
class OutcomeWriter {
 public:
  void u64(const uint64_t& v) {
    uint8_t b[8];
    put_u64(b, v);
    out_.append(reinterpret_cast<const char*>(b), 8);
  }
  template <typename T>
  void num(const T& v) {
    u64(static_cast<uint64_t>(v));
  }
  void str(const std::string& s) {
    u64(s.size());
    out_ += s;
  }
  void strs(const std::vector<std::string>& v) {
    u64(v.size());
    for (const auto& s : v) str(s);
  }
  void symptom(const std::optional<pb::Symptom>& s) {
    u64(s.has_value());
    if (s) str(s->SerializeAsString());
  }
  template <typename T, typename F>
  void opt(const std::optional<T>& v, F&& fields) {
    u64(v.has_value());
    if (v) fields(*this, const_cast<T&>(*v));
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class OutcomeReader {
 public:
  explicit OutcomeReader(const std::string& in) : in_(in) {}
  void u64(uint64_t& v) {
    v = 0;
    if (!ok_ || in_.size() - pos_ < 8) return fail();
    v = get_u64(reinterpret_cast<const uint8_t*>(in_.data() + pos_));
    pos_ += 8;
  }
  template <typename T>
  void num(T& v) {
    uint64_t x = 0;
    u64(x);
    v = static_cast<T>(x);
  }
  void str(std::string& s) {
    uint64_t n = 0;
    u64(n);
    if (!ok_ || in_.size() - pos_ < n) return fail();
    s = in_.substr(pos_, n);
    pos_ += n;
  }
  void strs(std::vector<std::string>& v) {
    uint64_t n = 0;
    u64(n);
    for (uint64_t i = 0; ok_ && i < n; ++i) str(v.emplace_back());
  }
  void symptom(std::optional<pb::Symptom>& s) {
    opt(s, [this](OutcomeReader&, pb::Symptom& m) {
      std::string bytes;
      str(bytes);
      if (!m.ParseFromString(bytes)) fail();
    });
  }
  template <typename T, typename F>
  void opt(std::optional<T>& v, F&& fields) {
    uint64_t present = 0;
    u64(present);
    if (present) fields(*this, v.emplace());
  }
  bool whole() const { return ok_ && pos_ == in_.size(); }

 private:
  void fail() { ok_ = false; }
  const std::string& in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// Every field of ReplayOutcome but `report`, in one order for both directions.
template <typename Io, typename Outcome>
void transfer(Io& io, Outcome& o) {
  io.str(o.packet);
  io.num(o.verdict);
  io.str(o.message);
  io.strs(o.notes);
  io.str(o.recorded_revision);
  io.u64(o.start_cycle);
  io.u64(o.end_cycle);
  io.u64(o.digests_checked);
  io.u64(o.windows_checked);
  io.opt(o.divergence, [](Io& x, auto& d) {
    x.num(d.window);
    x.u64(d.window_start);
    x.u64(d.window_end);
    x.u64(d.cycle);
    x.u64(d.expected);
    x.u64(d.actual);
    x.strs(d.stages);
  });
  io.symptom(o.recorded_symptom);
  io.symptom(o.replay_symptom);
  io.num(o.full_run);
  io.strs(o.evidence.triggers_armed);
  io.strs(o.evidence.triggers_hit);
  io.strs(o.evidence.counters);
  io.strs(o.evidence.counters_observed);
}

std::string encode_outcome(const ReplayOutcome& o) {
  OutcomeWriter w;
  transfer(w, o);
  return w.take();
}

std::optional<ReplayOutcome> decode_outcome(const std::string& bytes) {
  OutcomeReader r(bytes);
  ReplayOutcome o;
  transfer(r, o);
  if (!r.whole() || static_cast<int>(o.verdict) >= kNumVerdicts) return std::nullopt;
  return o;
}

// In the child: limits, the replay, its outcome down the pipe. Never returns.
[[noreturn]] void child_replay(int fd, const std::string& path, const ReplayOptions& options,
                               const Isolation& isolation) {
#ifndef BUD_SHADOW_SANITIZER
  if (isolation.memory_bytes) {
    const rlimit as{isolation.memory_bytes, isolation.memory_bytes};
    ::setrlimit(RLIMIT_AS, &as);
  }
#endif
  if (isolation.cpu_seconds) {
    // SIGXCPU at the soft limit, SIGKILL one second later should it be caught.
    const rlimit cpu{isolation.cpu_seconds, isolation.cpu_seconds + 1};
    ::setrlimit(RLIMIT_CPU, &cpu);
  }
  ReplayOutcome o;
  try {
    o = replay_file(path, options);
  } catch (const std::bad_alloc&) {
    o = {};
    o.packet = path;
    o.verdict = Verdict::Crashed;
    o.message = "out of memory (the replay is limited to " +
                std::to_string(isolation.memory_bytes) + " bytes of address space)";
  } catch (const std::exception& e) {
    o = {};
    o.packet = path;
    o.verdict = Verdict::Crashed;
    o.message = std::string("uncaught exception: ") + e.what();
  }
  const std::string bytes = encode_outcome(o);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t k = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) ::_exit(3);
    done += static_cast<size_t>(k);
  }
  // _exit: no static destructors or stdio flushes of the parent's buffers in the child.
  ::_exit(0);
}

std::string signal_text(int sig) {
  const char* what = sigabbrev_np(sig);
  const char* desc = sigdescr_np(sig);
  return "signal " + std::to_string(sig) +
         (what ? std::string(" (SIG") + what : std::string(" (?")) +
         (desc ? std::string(": ") + desc : std::string()) + ")";
}

}  // namespace

namespace {

// One isolated replay in flight: the child's pid and the read end of its report pipe.
struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string bytes;
};

// Forks the child that replays `path`; on failure returns false with `crashed` filled in.
// Only the main thread forks (corpus mode runs its children from one thread), so the child
// inherits no lock another thread held, and no write end of another packet's pipe (O_CLOEXEC
// does not cover fork, but the parent closes its copy right after each fork).
bool spawn_child(const std::string& path, const ReplayOptions& options,
                 const Isolation& isolation, Child& child, ReplayOutcome& crashed) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    crashed.message = std::string("cannot isolate the replay: pipe: ") + std::strerror(errno);
    return false;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    child_replay(fds[1], path, options, isolation);
  }
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    crashed.message = std::string("cannot isolate the replay: fork: ") + std::strerror(errno);
    return false;
  }
  child.pid = pid;
  child.fd = fds[0];
  return true;
}

// Reads what is available from the child's pipe; false at end of file (or a read error).
bool drain_child(Child& child) {
  char buf[65536];
  for (;;) {
    const ssize_t k = ::read(child.fd, buf, sizeof buf);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (k <= 0) return false;
    child.bytes.append(buf, static_cast<size_t>(k));
  }
}

// After the pipe's end of file: reaps the child and turns its exit and report into an outcome.
ReplayOutcome reap_child(Child& child, const std::string& path, const Isolation& isolation) {
  ::close(child.fd);
  child.fd = -1;
  ReplayOutcome crashed;
  crashed.packet = path;
  crashed.verdict = Verdict::Crashed;
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    crashed.message = "the replay was killed by " + signal_text(sig);
    if (sig == SIGXCPU || (sig == SIGKILL && isolation.cpu_seconds))
      crashed.message += " (the CPU-time limit is " + std::to_string(isolation.cpu_seconds) + " s)";
    else if (sig == SIGABRT && isolation.memory_bytes)
      crashed.message +=
          " (an abort; the memory limit is " + std::to_string(isolation.memory_bytes) + " bytes)";
    return crashed;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    crashed.message = "the replay exited with status " + std::to_string(WEXITSTATUS(status)) +
                      " before reporting";
    return crashed;
  }
  auto o = decode_outcome(child.bytes);
  if (!o) {
    crashed.message = "the replay's report did not arrive whole";
    return crashed;
  }
  return *o;
}

ReplayOutcome crashed_outcome(const std::string& path) {
  ReplayOutcome o;
  o.packet = path;
  o.verdict = Verdict::Crashed;
  return o;
}

// Isolated corpus replay: at most `jobs` children at once, all forked, read and reaped by this
// one thread (poll on their pipes). A multi-threaded parent that forks can hand a child a lock
// another thread held at the fork (ASan's allocator deadlocked that way).
void replay_children(const std::vector<std::string>& paths, const CorpusOptions& options,
                     unsigned jobs, CorpusResult& r) {
  using Clock = std::chrono::steady_clock;
  struct Running {
    size_t index;
    Child child;
    Clock::time_point t0;
  };
  std::vector<Running> running;
  running.reserve(jobs);
  std::vector<pollfd> fds;
  size_t next = 0;
  while (next < paths.size() || !running.empty()) {
    while (running.size() < jobs && next < paths.size()) {
      const size_t i = next++;
      Running run{i, {}, Clock::now()};
      ReplayOutcome crashed = crashed_outcome(paths[i]);
      if (!spawn_child(paths[i], options.replay, options.isolation, run.child, crashed)) {
        r.outcomes[i] = crashed;
        r.seconds[i] = 0;
        continue;
      }
      ::fcntl(run.child.fd, F_SETFL, ::fcntl(run.child.fd, F_GETFL) | O_NONBLOCK);
      running.push_back(std::move(run));
    }
    if (running.empty()) continue;
    fds.clear();
    for (const auto& run : running) fds.push_back({run.child.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      // poll itself failed: read the oldest child to its end, blocking, and try again.
      ::fcntl(fds[0].fd, F_SETFL, ::fcntl(fds[0].fd, F_GETFL) & ~O_NONBLOCK);
      fds[0].revents = POLLIN;
    }
    for (size_t k = running.size(); k-- > 0;) {
      if (!fds[k].revents) continue;
      auto& run = running[k];
      if (drain_child(run.child)) continue;  // still open: more to come
      r.outcomes[run.index] = reap_child(run.child, paths[run.index], options.isolation);
      r.seconds[run.index] = std::chrono::duration<double>(Clock::now() - run.t0).count();
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
}

}  // namespace

ReplayOutcome replay_isolated(const std::string& path, const ReplayOptions& options,
                              const Isolation& isolation) {
  ReplayOutcome crashed = crashed_outcome(path);
  Child child;
  if (!spawn_child(path, options, isolation, child, crashed)) return crashed;
  while (drain_child(child)) {
  }
  return reap_child(child, path, isolation);
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
  for (size_t i = 0; i < paths.size(); ++i) {
    if (i % options.shard.total != options.shard.index) continue;
    mine.push_back(paths[i]);
    r.corpus_index.push_back(i);
  }
  r.outcomes.resize(mine.size());
  r.seconds.resize(mine.size());
  const unsigned jobs = std::max(1u, std::min<unsigned>(options.jobs, mine.size()));
  if (options.isolation.enabled) {
    replay_children(mine, options, jobs, r);
    return r;
  }
  // In-process replays share nothing but their slot in the result: threads are safe here.
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < mine.size(); i = next++) {
      const auto t0 = std::chrono::steady_clock::now();
      r.outcomes[i] = replay_file(mine[i], options.replay);
      r.seconds[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < jobs; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  return r;
}

namespace {

// Text as XML 1.0 can carry it: invalid UTF-8 sequences and characters XML forbids (C0 controls
// other than tab/newline/CR) become U+FFFD, so that a packet named with stray bytes or a message
// quoting a binary field still gives a well-formed report. libxml2 escapes <, &, quotes.
std::string xml_text(const std::string& s) {
  static const char kReplacement[] = "\xEF\xBF\xBD";
  std::string o;
  o.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
        o += kReplacement;
      else
        o += static_cast<char>(c);
      ++i;
      continue;
    }
    const size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
    bool ok = n != 0 && i + n <= s.size();
    uint32_t cp = n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
    for (size_t k = 1; ok && k < n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      ok = (d & 0xC0) == 0x80;
      cp = (cp << 6) | (d & 0x3F);
    }
    // Overlong forms, surrogates, > U+10FFFF and the XML-forbidden U+FFFE/U+FFFF.
    ok = ok && !(n == 3 && cp < 0x800) && !(n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) &&
         !(cp >= 0xD800 && cp <= 0xDFFF) && cp != 0xFFFE && cp != 0xFFFF;
    if (ok) {
      o.append(s, i, n);
      i += n;
    } else {
      o += kReplacement;
      ++i;
    }
  }
  return o;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s < 0 ? 0.0 : s);
  return buf;
}

// A libxml2 text writer into memory; every call checked, the first failure remembered.
class XmlOut {
 public:
  XmlOut() : buf_(xmlBufferCreate()), w_(buf_ ? xmlNewTextWriterMemory(buf_, 0) : nullptr) {
    ok_ = w_ != nullptr;
    if (ok_) check(xmlTextWriterSetIndent(w_, 1));
    if (ok_) check(xmlTextWriterSetIndentString(w_, BAD_CAST "  "));
    if (ok_) check(xmlTextWriterStartDocument(w_, nullptr, "UTF-8", nullptr));
  }
  ~XmlOut() {
    if (w_) xmlFreeTextWriter(w_);
    if (buf_) xmlBufferFree(buf_);
  }
  XmlOut(const XmlOut&) = delete;
  XmlOut& operator=(const XmlOut&) = delete;

  void start(const char* element) {
    if (ok_) check(xmlTextWriterStartElement(w_, BAD_CAST element));
  }
  void attr(const char* name, const std::string& value) {
    if (ok_)
      check(xmlTextWriterWriteAttribute(w_, BAD_CAST name, BAD_CAST xml_text(value).c_str()));
  }
  void text(const std::string& value) {
    if (ok_) check(xmlTextWriterWriteString(w_, BAD_CAST xml_text(value).c_str()));
  }
  void end() {
    if (ok_) check(xmlTextWriterEndElement(w_));
  }
  /// The document, or empty if libxml2 reported an error.
  std::string finish() {
    if (ok_) check(xmlTextWriterEndDocument(w_));
    if (ok_) check(xmlTextWriterFlush(w_));
    if (!ok_) return {};
    return std::string(reinterpret_cast<const char*>(xmlBufferContent(buf_)),
                       static_cast<size_t>(xmlBufferLength(buf_)));
  }

 private:
  void check(int rc) { ok_ = ok_ && rc >= 0; }
  xmlBufferPtr buf_;
  xmlTextWriterPtr w_;
  bool ok_ = false;
};

}  // namespace

std::string junit_xml(const CorpusResult& result, const std::string& suite_name,
                      const std::vector<Shard>& missing_shards) {
  size_t failures = 0, errors = missing_shards.size();
  for (const auto& o : result.outcomes) {
    if (o.verdict == Verdict::Reproduced || o.verdict == Verdict::NewSymptom) ++failures;
    // A packet that cannot be replayed (unreadable, truncated, incompatible) or that diverged
    // is an error of the test, never a skip: CI must not show it green.
    if (o.verdict == Verdict::Diverged || o.verdict == Verdict::Incompatible ||
        o.verdict == Verdict::Crashed)
      ++errors;
  }
  double total_seconds = 0;
  for (const double t : result.seconds) total_seconds += t;
  XmlOut x;
  x.start("testsuites");
  x.attr("name", suite_name);
  x.attr("tests", std::to_string(result.outcomes.size() + missing_shards.size()));
  x.attr("failures", std::to_string(failures));
  x.attr("errors", std::to_string(errors));
  x.attr("skipped", "0");
  x.attr("time", seconds_text(total_seconds));
  x.start("testsuite");
  x.attr("name", suite_name);
  x.attr("tests", std::to_string(result.outcomes.size() + missing_shards.size()));
  x.attr("failures", std::to_string(failures));
  x.attr("errors", std::to_string(errors));
  x.attr("skipped", "0");
  x.attr("time", seconds_text(total_seconds));
  for (size_t i = 0; i < result.outcomes.size(); ++i) {
    const auto& o = result.outcomes[i];
    const std::string v = verdict_name(o.verdict);
    x.start("testcase");
    x.attr("name", std::filesystem::path(o.packet).filename().string());
    x.attr("classname", suite_name);
    x.attr("time", seconds_text(i < result.seconds.size() ? result.seconds[i] : 0.0));
    const bool failure = o.verdict == Verdict::Reproduced || o.verdict == Verdict::NewSymptom;
    const bool error = o.verdict == Verdict::Diverged || o.verdict == Verdict::Incompatible ||
                       o.verdict == Verdict::Crashed;
    if (failure || error) {
      x.start(failure ? "failure" : "error");
      x.attr("type", v);
      x.attr("message", o.message);
      std::string body = o.packet + ": " + v + ": " + o.message;
      for (const auto& n : o.notes) body += "\nnote: " + n;
      x.text(body);
      x.end();
    }
    x.start("system-out");
    x.text("verdict: " + v + "\n" + o.message + "\ncycles " + std::to_string(o.start_cycle) + ".." +
           std::to_string(o.end_cycle) + "\n");
    x.end();
    x.end();
  }
  for (const auto& s : missing_shards) {
    x.start("testcase");
    x.attr("name", s.file_stem());
    x.attr("classname", suite_name);
    x.attr("time", seconds_text(0));
    x.start("error");
    x.attr("type", "missing-shard");
    const std::string what = "shard " + s.text() + " reported no results (no " + s.file_stem() +
                             ".json): its packets were not replayed or their results were lost";
    x.attr("message", what);
    x.text(what);
    x.end();
    x.end();
  }
  x.end();
  x.end();
  return x.finish();
}

}  // namespace bud::replay
