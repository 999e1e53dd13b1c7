#include "debugger/frontend/Console.h"

#include <histedit.h>
#include <signal.h>

#include <cstring>
#include <istream>

namespace bud::debugger {

namespace {

class StreamReader final : public LineReader {
 public:
  explicit StreamReader(std::istream& in) : in_(in) {}
  std::optional<std::string> read(const std::string&) override {
    std::string line;
    if (!std::getline(in_, line)) return std::nullopt;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return line;
  }

 private:
  std::istream& in_;
};

class EditLineReader final : public LineReader {
 public:
  EditLineReader(std::function<std::vector<std::string>(const std::string&)> complete,
                 std::string history_file)
      : complete_(std::move(complete)), history_file_(std::move(history_file)) {
    el_ = el_init("bud", stdin, stdout, stderr);
    hist_ = history_init();
    HistEvent ev;
    history(hist_, &ev, H_SETSIZE, 2000);
    history(hist_, &ev, H_SETUNIQUE, 1);
    if (!history_file_.empty()) history(hist_, &ev, H_LOAD, history_file_.c_str());
    el_set(el_, EL_HIST, history, hist_);
    el_set(el_, EL_EDITOR, "emacs");
    el_set(el_, EL_SIGNAL, 1);
    el_set(el_, EL_CLIENTDATA, this);
    el_set(el_, EL_PROMPT, &EditLineReader::prompt_cb);
    el_set(el_, EL_ADDFN, "bud-complete", "complete a command or signal name",
           &EditLineReader::complete_cb);
    el_set(el_, EL_BIND, "^I", "bud-complete", nullptr);
    el_source(el_, nullptr);  // ~/.editrc
  }
  ~EditLineReader() override {
    HistEvent ev;
    if (!history_file_.empty()) history(hist_, &ev, H_SAVE, history_file_.c_str());
    history_end(hist_);
    el_end(el_);
  }

  std::optional<std::string> read(const std::string& prompt) override {
    prompt_ = prompt;
    while (true) {
      int count = 0;
      const char* line = el_gets(el_, &count);
      if (!line) {
        if (Session::interrupt_flag().exchange(false)) {
          std::fputs("\n", stdout);
          continue;  // Ctrl-C at the prompt: a fresh prompt
        }
        return std::nullopt;  // Ctrl-D
      }
      std::string s(line, static_cast<size_t>(count));
      while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
      if (s.find_first_not_of(" \t") != std::string::npos) {
        HistEvent ev;
        history(hist_, &ev, H_ENTER, s.c_str());
      }
      return s;
    }
  }

 private:
  static char* prompt_cb(EditLine* el) {
    void* self = nullptr;
    el_get(el, EL_CLIENTDATA, &self);
    return const_cast<char*>(static_cast<EditLineReader*>(self)->prompt_.c_str());
  }

  static unsigned char complete_cb(EditLine* el, int) {
    void* self_ptr = nullptr;
    el_get(el, EL_CLIENTDATA, &self_ptr);
    auto* self = static_cast<EditLineReader*>(self_ptr);
    const LineInfo* li = el_line(el);
    const std::string before(li->buffer, static_cast<size_t>(li->cursor - li->buffer));
    const size_t sp = before.find_last_of(" \t");
    const std::string word = sp == std::string::npos ? before : before.substr(sp + 1);
    const auto cands = self->complete_(before);
    if (cands.empty()) return CC_ERROR;
    // Longest common prefix of the candidates.
    std::string common = cands[0];
    for (const auto& c : cands) {
      size_t n = 0;
      while (n < common.size() && n < c.size() && common[n] == c[n]) ++n;
      common.resize(n);
    }
    if (common.size() > word.size()) {
      std::string add = common.substr(word.size());
      if (cands.size() == 1 && add.back() != '/') add += ' ';  // a directory goes on
      el_insertstr(el, add.c_str());
      return CC_REFRESH;
    }
    if (cands.size() == 1) {
      el_insertstr(el, " ");
      return CC_REFRESH;
    }
    std::fputs("\n", stdout);
    size_t col = 0;
    for (const auto& c : cands) {
      if (col + c.size() + 2 > 100) {
        std::fputs("\n", stdout);
        col = 0;
      }
      std::fprintf(stdout, "%s  ", c.c_str());
      col += c.size() + 2;
    }
    std::fputs("\n", stdout);
    return CC_REDISPLAY;
  }

  EditLine* el_ = nullptr;
  History* hist_ = nullptr;
  std::function<std::vector<std::string>(const std::string&)> complete_;
  std::string history_file_;
  std::string prompt_;
};

void on_sigint(int) { Session::interrupt_flag().store(true); }

}  // namespace

std::unique_ptr<LineReader> make_stream_reader(std::istream& in) {
  return std::make_unique<StreamReader>(in);
}

std::unique_ptr<LineReader> make_editline_reader(
    std::function<std::vector<std::string>(const std::string&)> complete,
    const std::string& history_file) {
  return std::make_unique<EditLineReader>(std::move(complete), history_file);
}

void Console::install_interrupt_handler() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  // Restart interrupted reads: Ctrl-C at a piped prompt must not look like end of input.
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
}

Console::Console(Interpreter& interp, ConsoleOptions options, std::ostream& out, std::ostream& err)
    : interp_(interp), options_(std::move(options)), out_(out), err_(err) {
  if (options_.progress_every && !options_.json)
    interp_.session().set_progress_callback([this](uint64_t cycle) { show_progress(cycle); });
}

void Console::show_progress(uint64_t cycle) {
  if (cycle < next_progress_) return;
  // Due on the grid of multiples of progress_every: the same lines on every machine.
  next_progress_ = (cycle / options_.progress_every + 1) * options_.progress_every;
  out_ << "\r  running... cycle " << cycle << " (+" << cycle - run_start_ << ")  Ctrl-C stops"
       << std::flush;
  progress_shown_ = true;
}

Console::~Console() {
  if (options_.progress_every && !options_.json) interp_.session().set_progress_callback({});
}

void Console::render(const std::string& line, const CommandResult& r) {
  if (progress_shown_) {
    out_ << "\r\033[K";  // erase the progress line before the result
    progress_shown_ = false;
  }
  if (options_.json) {
    json::Json j = json::Json::object();
    j["command"] = line;
    j["ok"] = r.ok;
    j["cycle"] = interp_.session().emu().cycle();
    if (!r.ok) j["error"] = r.error;
    json::Json out = json::Json::array();
    for (const auto& l : r.lines) out.push_back(l);
    j["output"] = out;
    j["data"] = r.data;
    out_ << j.dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
    out_.flush();
    return;
  }
  if (options_.echo) out_ << options_.prompt << line << "\n";
  for (const auto& l : r.lines) out_ << l << "\n";
  out_.flush();
  if (!r.ok) {
    err_ << "error: " << r.error << "\n";
    err_.flush();
  }
}

CommandResult Console::run_line(const std::string& line) {
  run_start_ = interp_.session().emu().cycle();
  if (options_.progress_every)
    next_progress_ = (run_start_ / options_.progress_every + 1) * options_.progress_every;
  auto r = interp_.execute(line);
  render(line, r);
  if (!r.ok) failed_ = true;
  if (r.quit) quit_ = true;
  return r;
}

bool Console::run_script(const std::string& path) {
  std::vector<std::pair<std::string, CommandResult>> results;
  const bool ok = interp_.source(path, results, true,
                                 [this](const std::string& line, const CommandResult& r) {
                                   render(line, r);  // now, while the cycle is that command's
                                   if (r.quit) quit_ = true;
                                 });
  if (!ok) failed_ = true;
  return ok;
}

bool Console::loop(LineReader& reader) {
  bool ok = true;
  while (!quit_) {
    // Inside `commands N ... end` the prompt says lines are being collected (as gdb's ">").
    auto line = reader.read(interp_.collecting_commands() ? std::string(">") : options_.prompt);
    if (!line) break;
    if (!run_line(*line).ok) ok = false;
  }
  return ok;
}

}  // namespace bud::debugger
