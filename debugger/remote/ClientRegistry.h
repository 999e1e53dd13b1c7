// The attached clients of a debug server and their roles: at most one controller, any number of
// read-only observers (up to a limit). Thread-safe; no gRPC types.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace bud::remote {

enum class ClientRole { Controller, Observer };

/// One attached client.
struct ClientInfo {
  std::string id;    ///< unguessable session id (128 random bits, hex)
  std::string name;  ///< what the client calls itself
  ClientRole role = ClientRole::Observer;
};

class ClientRegistry {
 public:
  explicit ClientRegistry(size_t max_clients) : max_clients_(max_clients) {}

  /// Adds a client; it becomes the controller when `want_control` and the role is free. With
  /// `require_control` and the role taken, nothing is added. nullopt when the limit is reached
  /// or control was required and unavailable (`error` says which).
  std::optional<ClientInfo> add(const std::string& name, bool want_control, bool require_control,
                                std::string& error);
  /// Removes a client; returns true if it was the controller (the role is then free).
  bool remove(const std::string& id);
  std::optional<ClientInfo> find(const std::string& id) const;
  /// Makes `id` the controller if nobody is. Returns its role afterwards.
  std::optional<ClientRole> take_control(const std::string& id);
  /// Gives the role back; returns true if `id` was the controller.
  bool release_control(const std::string& id);
  /// Name of the controller, "" if none.
  std::string controller_name() const;
  size_t size() const;

 private:
  mutable std::mutex mutex_;
  size_t max_clients_;
  std::map<std::string, ClientInfo> clients_;
  std::string controller_;  ///< id, "" if none
};

}  // namespace bud::remote
