// Reading protobuf text format (workload files, energy tables) with errors that name the place:
// "FILE:LINE:COL: message", lines and columns counted from 1.
#pragma once

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/message.h>
#include <google/protobuf/text_format.h>

#include <string>

namespace bud::textproto {

using Tree = google::protobuf::TextFormat::ParseInfoTree;

/// Keeps the parser's first syntax error as "FILE:LINE:COL: message".
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  explicit FirstError(std::string file) : file_(std::move(file)) {}
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override;
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
  const std::string& error() const { return error_; }

 private:
  std::string file_;
  std::string error_;
};

/// Turns parse-tree locations into "FILE:LINE:COL" strings.
class Locator {
 public:
  explicit Locator(std::string file) : file_(std::move(file)) {}
  /// Location of `field` (element `index` of a repeated field) of `msg` in `tree`, else
  /// `fallback`.
  std::string at(const Tree* tree, const google::protobuf::Message& msg, const char* field,
                 int index, const std::string& fallback) const;
  /// The parse tree of a nested message field (element `index` if repeated), or null.
  const Tree* nested(const Tree* tree, const google::protobuf::Message& msg, const char* field,
                     int index) const;
  /// "FILE:1:1".
  std::string start() const { return file_ + ":1:1"; }

 private:
  std::string file_;
};

/// Parses `text` into `msg`, recording locations in `tree`. Returns the first error as
/// "FILE:LINE:COL: message", empty on success.
std::string parse(const std::string& text, const std::string& file, google::protobuf::Message& msg,
                  Tree& tree);

}  // namespace bud::textproto
