#include "tools/plots/HtmlReport.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace {

const std::string kFixture = std::string(BUD_SOURCE_DIR) + "/tests/html/fixture_report.py";

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(BUD_BINARY_DIR) / "test-plots" / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST_CASE("render_html writes the page a script lays out, the same bytes every time",
          "[plots][html]") {
  const fs::path d = fresh_dir("same");
  const nlohmann::json data = {{"title", "same bytes"}, {"values", {2, 7, 1, 8}}};
  REQUIRE(bud::plots::render_html(kFixture, data, d / "a.html").empty());
  REQUIRE(bud::plots::render_html(kFixture, data, d / "b.html").empty());
  const std::string a = slurp(d / "a.html");
  CHECK(a.find("<title>same bytes</title>") != std::string::npos);
  CHECK(a.find("<svg") != std::string::npos);
  CHECK(a == slurp(d / "b.html"));
  // Only the page is left behind: no input or partial file.
  CHECK(std::distance(fs::directory_iterator(d), fs::directory_iterator()) == 2);
}

TEST_CASE("render_html reports a failing script and leaves no page", "[plots][html]") {
  const fs::path d = fresh_dir("fail");
  const nlohmann::json data = {{"title", "t"}, {"values", {1}}, {"raise", "bad layer index 7"}};
  const std::string err = bud::plots::render_html(kFixture, data, d / "r.html");
  CHECK(err.find("fixture_report.py failed") != std::string::npos);
  CHECK(err.find("ValueError: bad layer index 7") != std::string::npos);
  CHECK(fs::is_empty(d));
}

TEST_CASE("render_html names a script it cannot find", "[plots][html]") {
  const fs::path d = fresh_dir("missing");
  const std::string err = bud::plots::render_html("no_such_report", {}, d / "r.html");
  CHECK(err.find("no_such_report.py not found") != std::string::npos);
  CHECK(fs::is_empty(d));
}

TEST_CASE("render_html says when the interpreter lacks matplotlib", "[plots][html]") {
  // A python3 without matplotlib: run the interpreter in isolated mode with no site packages.
  const fs::path d = fresh_dir("nompl");
  const fs::path fake = d / "python-without-matplotlib";
  {
    std::ofstream f(fake);
    f << "#!/bin/sh\nexec \"" << BUD_TEST_PYTHON << "\" -I -S \"$@\"\n";
  }
  fs::permissions(fake, fs::perms::owner_all);
  ::setenv("BUD_PYTHON", fake.c_str(), 1);
  const std::string err = bud::plots::render_html(kFixture, {{"title", "t"}, {"values", {1}}},
                                                  d / "r.html");
  ::unsetenv("BUD_PYTHON");
  CHECK(err.find("No module named 'matplotlib'") != std::string::npos);
  CHECK(err.find("install python3-matplotlib") != std::string::npos);
  CHECK(!fs::exists(d / "r.html"));
}
