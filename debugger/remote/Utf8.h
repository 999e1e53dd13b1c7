// Text the server puts into a protobuf `string` field must be valid UTF-8: the Python client (and
// any proto3 reader that checks) rejects the whole message otherwise. Error messages echo what a
// client sent (trigger text, names, specs), so every string the server sets goes through here.
#pragma once

#include <string>
#include <string_view>

namespace bud::remote {

/// `s` with every byte that does not start a well-formed UTF-8 sequence (overlong forms,
/// surrogates, code points past U+10FFFF, truncated sequences) replaced by U+FFFD. Valid input
/// is returned unchanged. Linear in the length.
std::string valid_utf8(std::string_view s);

}  // namespace bud::remote
