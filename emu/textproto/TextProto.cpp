#include "emu/textproto/TextProto.h"

namespace bud::textproto {

namespace gp = google::protobuf;

void FirstError::AddError(int line, gp::io::ColumnNumber column, const std::string& message) {
  if (!error_.empty()) return;
  error_ = file_ + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message;
}

std::string Locator::at(const Tree* tree, const gp::Message& msg, const char* field, int index,
                        const std::string& fallback) const {
  if (!tree) return fallback;
  const gp::FieldDescriptor* fd = msg.GetDescriptor()->FindFieldByName(field);
  if (!fd) return fallback;
  if (fd->is_repeated()) {
    // The parser records one location per `field:` occurrence, so a list `[a, b]` has one
    // location for all its elements: then point at the list.
    const int size = msg.GetReflection()->FieldSize(msg, fd);
    if (index < 0 || index >= size) return fallback;
    if (tree->GetLocation(fd, size - 1).line < 0) index = 0;
  }
  const gp::TextFormat::ParseLocation loc = tree->GetLocation(fd, fd->is_repeated() ? index : -1);
  if (loc.line < 0) return fallback;
  return file_ + ":" + std::to_string(loc.line + 1) + ":" + std::to_string(loc.column + 1);
}

const Tree* Locator::nested(const Tree* tree, const gp::Message& msg, const char* field,
                            int index) const {
  if (!tree) return nullptr;
  const gp::FieldDescriptor* fd = msg.GetDescriptor()->FindFieldByName(field);
  return fd ? tree->GetTreeForNested(fd, fd->is_repeated() ? index : -1) : nullptr;
}

std::string parse(const std::string& text, const std::string& file, gp::Message& msg, Tree& tree) {
  FirstError errors(file);
  gp::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(&tree);
  if (parser.ParseFromString(text, &msg)) return {};
  return errors.error().empty() ? file + ":1:1: cannot parse" : errors.error();
}

}  // namespace bud::textproto
