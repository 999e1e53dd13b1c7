// Built-in workloads: the .textpb files of emu/workload/builtins/, embedded in the library at
// build time, so `bud run gemm_small` works without any file on disk.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "emu/workload/Workload.h"

namespace bud::workload {

/// Name and one-line description of a built-in workload.
struct BuiltinInfo {
  std::string name;
  std::string description;
};

/// Every built-in, sorted by name.
std::vector<BuiltinInfo> list_builtins();
/// The text of a built-in (its .textpb), if `name` is one.
std::optional<std::string_view> builtin_text(std::string_view name);
/// Parses a built-in (messages name "builtin:<name>.textpb").
Result<Workload> load_builtin(std::string_view name, const LoadOptions& options = {});

}  // namespace bud::workload
