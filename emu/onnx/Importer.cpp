// ONNX import: the public entry points (emu/onnx/Importer.h). The work is in GraphImporter.
#include "emu/onnx/Importer.h"

#include <fstream>
#include <sstream>

#include "emu/onnx/GraphImporter.h"

namespace bud::onnx_import {

using workload::Error;
using workload::Result;

bool is_onnx_path(std::string_view path) {
  return path.size() > 5 && path.substr(path.size() - 5) == ".onnx";
}


Result<ImportResult> import_bytes(std::string_view bytes, const std::string& file,
                                  const ImportOptions& options) {
  detail::GraphImporter imp(file, options);
  return imp.run(bytes);
}

Result<ImportResult> import_file(const std::string& path, const ImportOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open ONNX file"};
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Error{path + ": cannot read ONNX file"};
  return import_bytes(ss.str(), path, options);
}

}  // namespace bud::onnx_import
