#include "debugger/remote/TokenAuth.h"

#include <sys/stat.h>

#include <fstream>

namespace bud::remote {

std::optional<std::string> load_token_file(const std::string& path, std::string& error) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    error = path + ": cannot read the token file";
    return std::nullopt;
  }
  if (st.st_mode & 077) {
    error = path + ": the token file must be readable by its owner only (chmod 600 " + path + ")";
    return std::nullopt;
  }
  std::ifstream f(path);
  std::string line;
  if (!f || !std::getline(f, line)) {
    error = path + ": cannot read the token file";
    return std::nullopt;
  }
  const auto b = line.find_first_not_of(" \t\r\n");
  const auto e = line.find_last_not_of(" \t\r\n");
  line = b == std::string::npos ? "" : line.substr(b, e - b + 1);
  if (line.size() < 16) {
    error = path +
            ": the token must be at least 16 characters (e.g. `head -c 24 /dev/urandom | "
            "base64 > " +
            path + "`)";
    return std::nullopt;
  }
  return line;
}

bool constant_time_equal(const std::string& a, const std::string& b) {
  // Walk the expected length whatever the input, folding every difference into one value.
  const size_t n = a.size();
  unsigned char diff = static_cast<unsigned char>(a.size() != b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(static_cast<unsigned char>(a[i]) ^ y);
  }
  volatile unsigned char sink = diff;  // keep the compiler from short-circuiting the loop
  return sink == 0;
}

bool TokenAuth::accepts(const std::string& header) const {
  if (token_.empty()) return true;
  static const std::string kPrefix = "Bearer ";
  const std::string given = header.rfind(kPrefix, 0) == 0 ? header.substr(kPrefix.size()) : "";
  return constant_time_equal(token_, given);
}

}  // namespace bud::remote
