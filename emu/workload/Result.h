// A value or a one-line error message: how bud's workload, lowering and golden APIs report
// expected failures (bad input, shapes that do not fit) without exceptions.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace bud::workload {

/// An error message, one line, already naming the file:line:col or object at fault.
struct Error {
  std::string message;
};

/// Either a T or an Error. Accessing the wrong alternative is an assertion failure.
template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  /// True if a value is held.
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  const T& operator*() const& { return value(); }

  /// The error message ("" when ok()).
  const std::string& error() const {
    static const std::string none;
    return ok() ? none : std::get<1>(v_).message;
  }

 private:
  std::variant<T, Error> v_;
};

}  // namespace bud::workload
