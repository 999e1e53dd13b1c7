#include "tools/plots/HtmlReport.h"

#include <cstdlib>
#include <fstream>
#include <system_error>
#include <vector>

#include "tools/process/Subprocess.h"

namespace bud::plots {

namespace fs = std::filesystem;

namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

// The last few lines of a failed script's stderr: the Python exception, not the whole traceback.
std::string tail_lines(const std::string& text, size_t lines) {
  std::vector<std::string> kept;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    if (nl > pos) kept.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  std::string out;
  for (size_t i = kept.size() > lines ? kept.size() - lines : 0; i < kept.size(); ++i)
    out += (out.empty() ? "" : " | ") + kept[i];
  return out;
}

}  // namespace

fs::path script_path(std::string_view script) {
  if (script.find('/') != std::string_view::npos) return fs::path(script);
  return fs::path(env_or("BUD_PLOTS_DIR", BUD_PLOTS_DIR)) / (std::string(script) + ".py");
}

std::string render_html(std::string_view script, const nlohmann::json& data, const fs::path& out) {
  const fs::path path = script_path(script);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    return "plotting script " + path.string() + " not found (set BUD_PLOTS_DIR to bud's tools/plots)";
  fs::path input = out, part = out;
  input += ".json.part";
  part += ".part";
  {
    std::ofstream f(input, std::ios::binary | std::ios::trunc);
    f << data.dump();
    if (!f.flush()) {
      fs::remove(input, ec);
      return "cannot write " + input.string();
    }
  }
  const std::string python = env_or("BUD_PYTHON", BUD_PLOT_PYTHON);
  const process::Finished ran =
      process::run({python, path.string(), "--data", input.string(), "--out", part.string()});
  fs::remove(input, ec);
  if (ran.status != 0) {
    fs::remove(part, ec);
    std::string why = tail_lines(ran.err.empty() ? ran.out : ran.err, 3);
    if (why.find("No module named 'matplotlib'") != std::string::npos)
      why += " (install python3-matplotlib, or set BUD_PYTHON to a python3 that has it)";
    return path.filename().string() + " failed (" + python + ", status " +
           std::to_string(ran.status) + "): " + why;
  }
  fs::rename(part, out, ec);
  if (ec) {
    fs::remove(part, ec);
    return "cannot write " + out.string() + ": " + ec.message();
  }
  return {};
}

}  // namespace bud::plots
