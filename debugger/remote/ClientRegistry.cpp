#include "debugger/remote/ClientRegistry.h"

#include <cstdio>
#include <random>

namespace bud::remote {

namespace {

std::string random_id() {
  std::random_device rd;  // the kernel's CSPRNG on Linux
  std::string s;
  char buf[9];
  for (int i = 0; i < 4; ++i) {
    std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(rd()));
    s += buf;
  }
  return s;
}

}  // namespace

std::optional<ClientInfo> ClientRegistry::add(const std::string& name, bool want_control,
                                              bool require_control, std::string& error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (clients_.size() >= max_clients_) {
    error = "too many clients attached (limit " + std::to_string(max_clients_) + ")";
    return std::nullopt;
  }
  if (require_control && !controller_.empty()) {
    error = "'" + clients_.at(controller_).name + "' has control";
    return std::nullopt;
  }
  ClientInfo c;
  c.id = random_id();
  c.name = name.empty() ? "client" : name;
  if ((want_control || require_control) && controller_.empty()) {
    c.role = ClientRole::Controller;
    controller_ = c.id;
  }
  clients_[c.id] = c;
  return c;
}

bool ClientRegistry::remove(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  clients_.erase(id);
  if (controller_ == id) {
    controller_.clear();
    return true;
  }
  return false;
}

std::optional<ClientInfo> ClientRegistry::find(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = clients_.find(id);
  if (it == clients_.end()) return std::nullopt;
  return it->second;
}

std::optional<ClientRole> ClientRegistry::take_control(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = clients_.find(id);
  if (it == clients_.end()) return std::nullopt;
  if (controller_.empty()) {
    controller_ = id;
    it->second.role = ClientRole::Controller;
  }
  return it->second.role;
}

bool ClientRegistry::release_control(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (controller_ != id) return false;
  controller_.clear();
  if (auto it = clients_.find(id); it != clients_.end()) it->second.role = ClientRole::Observer;
  return true;
}

std::string ClientRegistry::controller_name() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (controller_.empty()) return {};
  auto it = clients_.find(controller_);
  return it == clients_.end() ? std::string() : it->second.name;
}

size_t ClientRegistry::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return clients_.size();
}

}  // namespace bud::remote
