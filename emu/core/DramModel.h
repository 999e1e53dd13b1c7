// Cycle-level DRAM timing model behind the NPU's DRAM port (docs/isa.md, "DRAM port"). The harness
// drives it once per simulated cycle; it decides when requests are accepted and when, and in which
// order, responses come back. Everything it does is a function of its config, its seed and the
// request sequence, so runs, checkpoints and replays are bit-identical.
//
// Per-cycle calls (req_ready, resp, accept, pop_resp, tick) never allocate, lock, throw or do I/O:
// in-flight requests live in a fixed array of kDramMaxOutstanding slots and memory is allocated
// once, at construction or restore.
#pragma once

#include <array>
#include <cstdlib>
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "emu/core/Rng.h"
#include "emu/core/StateSegments.h"

namespace bud::emu {

/// Largest request the port carries, in bytes (the width of wdata/rdata).
inline constexpr uint32_t kDramMaxBytes = 64;
/// Hard limit on DramConfig::max_outstanding (the capacity of the in-flight array).
inline constexpr uint32_t kDramMaxOutstanding = 64;
/// Memory is tracked (dirty bits, hashes, checkpoints) in pages of this many bytes.
inline constexpr uint32_t kDramPageBytes = 4096;

/// A request as the RTL presents it at the request handshake.
struct DramRequest {
  bool write = false;
  uint32_t addr = 0;  ///< byte address, must be 8-aligned
  uint8_t size = 0;   ///< bytes, 8..64 in steps of 8
  uint8_t tag = 0;    ///< echoed in the response; the model does not require tags to be unique
  std::array<uint8_t, kDramMaxBytes> wdata{};  ///< byte i goes to addr+i (i < size)
};

/// A response (read data or write acknowledgement) as presented to the RTL.
struct DramResponse {
  bool write = false;  ///< true: write acknowledgement, rdata is all zero
  uint8_t tag = 0;
  uint32_t addr = 0;  ///< address of the request answered (debug only, not on the RTL port)
  uint8_t size = 0;   ///< size of the request answered (debug only)
  std::array<uint8_t, kDramMaxBytes> rdata{};  ///< byte i = mem[addr+i] for i < size, 0 beyond
  uint64_t issue_cycle = 0;  ///< cycle the request was accepted at (debug/latency stats only)
};

/// Timing and size parameters. Check with validate() before constructing a model.
struct DramConfig {
  uint64_t size_bytes =
      16ull << 20;             ///< memory size in bytes: a multiple of kDramPageBytes, <= 4 GiB
  uint32_t base_latency = 40;  ///< cycles from acceptance to earliest response (>= 1)
  uint32_t jitter = 8;         ///< extra latency per request, uniform in [0, jitter] cycles
  /// Response-channel bandwidth in bytes per cycle: a read response of S bytes keeps the channel
  /// busy for ceil(S / bytes_per_cycle) cycles (counted from its first presentation) before the
  /// next response may be presented; a write acknowledgement costs one cycle.
  uint32_t bytes_per_cycle = 16;
  /// Requests accepted whose response has not completed its handshake yet; req_ready is low while
  /// this many are outstanding. 1..kDramMaxOutstanding.
  uint32_t max_outstanding = 16;
  /// true: among responses whose latency has elapsed, present the one that became ready first
  /// (ties: the one accepted first), so responses may overtake each other. false: strictly in
  /// acceptance order.
  bool reorder = true;
  /// Bursty back-pressure: req_ready is forced low for stretches of cycles. Stretch and gap
  /// lengths are drawn from the seeded Rng, uniform around their means.
  bool bursty = false;
  uint32_t burst_period =
      200;  ///< mean cycles from the start of one stall stretch to the next (>= 2)
  uint32_t burst_duty_pct = 25;  ///< mean percentage of cycles stalled (1..99)
  uint64_t seed = 1;             ///< seeds the jitter and burst generators

  /// Empty when the config is usable, else one line saying which field is wrong and why.
  std::string validate() const;
};

/// What a recorded error was about.
enum class DramErrorKind : uint8_t {
  Misaligned = 1,          ///< request address not 8-byte aligned
  BadSize = 2,             ///< request size not in {8, 16, ..., 64}
  OutOfRange = 3,          ///< request runs past the end of memory
  AcceptNotReady = 4,      ///< accept() while req_ready() was low, or twice in one cycle
  PopWithoutResponse = 5,  ///< pop_resp() while no response was presented
};
/// "misaligned", "bad-size", "out-of-range", "accept-not-ready", "pop-without-response".
const char* dram_error_kind_name(DramErrorKind kind);

/// The first protocol or address error the model saw (sticky until clear_error()).
struct DramError {
  DramErrorKind kind = DramErrorKind::Misaligned;
  bool write = false;
  uint64_t cycle = 0;  ///< cycle of the offending call
  uint32_t addr = 0;
  uint8_t size = 0;
  uint8_t tag = 0;
  /// One line, e.g. "dram: misaligned read addr=0x1004 size=16 tag=3 at cycle 120".
  std::string to_string() const;
  bool operator==(const DramError&) const = default;
};

/// Counters since construction (restored by restore()).
struct DramStats {
  uint64_t read_requests = 0;       ///< read requests accepted
  uint64_t write_requests = 0;      ///< write requests accepted
  uint64_t bytes_read = 0;          ///< bytes sampled from memory for presented read responses
  uint64_t bytes_written = 0;       ///< bytes applied to memory by writes
  uint64_t responses = 0;           ///< responses presented (first presentations, incl. duplicates)
  uint64_t reads_completed = 0;     ///< read responses presented (latency samples)
  uint64_t total_read_latency = 0;  ///< sum over reads of (first presentation - acceptance), cycles
  uint64_t max_read_latency = 0;    ///< largest such latency, cycles
  uint64_t backpressure_cycles = 0;  ///< cycles in which req_ready() was low
  uint64_t reorders = 0;    ///< responses presented while an older request was still waiting
  uint64_t dropped = 0;     ///< responses discarded by drop_next_response
  uint64_t duplicated = 0;  ///< extra presentations made by duplicate_next_response
  uint64_t delayed = 0;     ///< responses held back by delay_next_response
  uint64_t errors = 0;      ///< errors seen (error() keeps only the first)
  bool operator==(const DramStats&) const = default;
};

/// Cycle-level DRAM model. Per cycle the harness calls, in this order:
///   req_ready(); resp(); [evaluate the RTL]; accept() if the request handshakes;
///   pop_resp() if the response handshakes; tick().
/// The model is a value: copies are independent and behave identically.
class DramModel {
 public:
  /// Builds a zero-filled memory. `config` must pass validate() (checked; aborts otherwise).
  explicit DramModel(const DramConfig& config = {});

  // ---- Per-cycle interface (no allocation, no exceptions, no I/O) ----

  /// May a request be accepted at this cycle's edge? Fixed for the whole cycle.
  bool req_ready() const { return t_.ready; }
  /// The response presented this cycle, or nullptr. Valid until pop_resp() or tick().
  const DramResponse* resp() const { return t_.has_current ? &t_.current : nullptr; }
  /// Request handshake at this cycle's edge. Returns false (and records an AcceptNotReady error)
  /// if req_ready() is low or a request was already accepted this cycle. A bad address or size is
  /// accepted but recorded as an error: the read returns zeros, the write is dropped.
  bool accept(const DramRequest& req);
  /// Response handshake at this cycle's edge. Returns false (and records an error) if no response
  /// is presented.
  bool pop_resp();
  /// Ends the cycle: advances the clock, the burst generator, and picks the response to present.
  void tick();

  // ---- Backdoor (host) access: untimed, not seen by in-flight requests until they present ----

  /// Copies mem[addr, addr+out.size()) into `out`. False (nothing copied) if out of range.
  bool read(uint32_t addr, std::span<uint8_t> out) const;
  /// Copies `in` to mem[addr, ...). False (nothing written) if out of range.
  bool write(uint32_t addr, std::span<const uint8_t> in);
  /// Memory size in bytes.
  uint64_t size() const { return config_.size_bytes; }

  // ---- Fault hooks (deterministic; each call arms one event for one tag) ----

  /// The next response carrying `tag` is silently discarded. Its side effects still happen (a
  /// write is applied: the acknowledgement is what gets lost) and its slot is freed.
  void drop_next_response(uint8_t tag);
  /// The next response carrying `tag` is presented twice: after its handshake an identical copy
  /// (same data, no second memory access) is presented as soon as the channel allows.
  void duplicate_next_response(uint8_t tag);
  /// The next response carrying `tag` is held back `cycles` cycles from the cycle it would have
  /// been presented at. A later call for the same tag replaces the pending delay; 0 cancels it.
  void delay_next_response(uint8_t tag, uint32_t cycles);

  // ---- Observation ----

  /// Current cycle (0 at construction, +1 per tick()).
  uint64_t cycle() const { return t_.cycle; }
  /// Requests accepted whose response handshake has not happened yet.
  uint32_t outstanding() const { return t_.count; }
  const DramStats& stats() const { return stats_; }
  /// The first error recorded, if any.
  const std::optional<DramError>& error() const { return error_; }
  void clear_error() { error_.reset(); }
  const DramConfig& config() const { return config_; }

  // ---- State ----

  /// Appends the complete state (config, clock, RNG states, in-flight requests, channel, burst
  /// state, fault hooks, stats, error and memory contents) to `out`. Call between cycles (after
  /// tick()). Pages never written are not stored. Equal to save_meta() followed by the bytes of
  /// each page of saved_pages(), in that order.
  void save(std::vector<uint8_t>& out) const;
  /// Appends the part of save() before the page contents: everything but memory, then the page
  /// size, count and the list of stored page indices.
  void save_meta(std::vector<uint8_t>& out) const;
  /// Replaces `out` with the indices of the pages save() stores (ever written), ascending.
  void saved_pages(std::vector<uint32_t>& out) const;
  /// The kDramPageBytes bytes of page `page`, in place (valid until the model changes).
  std::span<const uint8_t> page_bytes(uint32_t page) const {
    return {mem_.data() + size_t{page} * kDramPageBytes, kDramPageBytes};
  }
  /// Version of page `page`'s contents (StateSegments::new_version()): the same value means the
  /// same bytes; it changes at the first call after the page was written (or restored).
  uint64_t page_version(uint32_t page) const {
    if (dirty_[page]) refresh_page(page);
    return page_version_[page];
  }
  /// hash_page() of page `page`, cached until the page is written.
  uint64_t page_hash(uint32_t page) const {
    if (dirty_[page]) refresh_page(page);
    return page_hash_[page];
  }
  /// Content hash of kDramPageBytes bytes (the page hash of digest() and page_hash()).
  static uint64_t hash_page(const uint8_t* bytes);
  /// Reads a state written by save() starting at in[offset]. On success replaces the whole model
  /// (config included), advances `offset` past the state and returns true. On failure returns
  /// false, leaves the model and `offset` untouched and sets `error` to one line naming the byte
  /// offset at fault. `require_size_bytes` (0: any) refuses a state of another memory size
  /// before anything is allocated for it.
  bool restore(std::span<const uint8_t> in, size_t& offset, std::string& error,
               uint64_t require_size_bytes = 0);
  /// Hash of memory contents plus every piece of state that affects future behaviour (config,
  /// clock, RNGs, in-flight requests, channel, burst, hooks; not stats or the error record).
  /// Incremental: only pages written since the previous digest are re-hashed. Not thread-safe.
  uint64_t digest() const;
  /// Hash of memory contents only, for comparing results of runs with different timing.
  uint64_t memory_digest() const;

 private:
  struct Slot {
    DramRequest req;
    uint64_t seq = 0;  // acceptance order
    uint64_t accept_cycle = 0;
    uint64_t ready_at = 0;  // earliest cycle the response may be presented
    bool valid = false;
    bool bad = false;  // address/size error: read zeros, drop the write
  };
  struct Hook {
    uint32_t drop = 0;
    uint32_t duplicate = 0;
    uint32_t delay = 0;
  };
  // Everything that evolves per cycle and decides the future, kept together so restore() can
  // parse into a temporary and commit with one assignment.
  struct Timing {
    uint64_t cycle = 0;
    uint64_t next_seq = 0;
    uint64_t channel_free_at = 0;  // first cycle the channel may present a new response
    uint64_t burst_left = 0;       // cycles left in the current burst phase
    Rng rng;                       // latency jitter
    Rng burst_rng;                 // burst stretch lengths
    bool ready = true;
    bool accepted_this_cycle = false;
    bool burst_stalled = false;
    bool has_current = false;
    bool current_duplicate = false;  // present `current` again after its handshake
    bool pending_duplicate = false;  // the copy is waiting for the channel
    int8_t current_slot = -1;        // slot of the presented response, -1 for a duplicate copy
    uint32_t count = 0;              // valid slots
    DramResponse current{};
    std::array<Slot, kDramMaxOutstanding> slots{};
    std::array<Hook, 256> hooks{};
  };

  void recompute_derived();
  bool compute_ready() const;
  uint64_t draw_burst_length(bool stalled);
  void present_next();
  void record_error(DramErrorKind kind, const DramRequest& req);
  bool request_ok(const DramRequest& req, DramErrorKind* kind) const;
  void mark_written(uint64_t addr, uint64_t len);
  void refresh_page(size_t page) const;
  void save_config(std::vector<uint8_t>& out) const;
  void save_timing(std::vector<uint8_t>& out) const;

  DramConfig config_;
  Timing t_;
  DramStats stats_;
  std::optional<DramError> error_;

  // Derived from config_ (recomputed, never saved).
  std::array<uint32_t, kDramMaxBytes + 1> read_cost_{};  // channel cycles per read size
  uint64_t stall_mean_ = 1;
  uint64_t open_mean_ = 1;

  /// Zero-initialised bytes from an anonymous mapping: the kernel hands out zero pages, so a
  /// 16 MiB memory costs nothing until it is touched. (std::vector would memset it, and so does
  /// calloc once glibc's dynamic mmap threshold has risen past the size after the first free.)
  class ZeroedBytes {
   public:
    ZeroedBytes() = default;
    ZeroedBytes(const ZeroedBytes& o) { copy_from(o); }
    ZeroedBytes(ZeroedBytes&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr, o.n_ = 0; }
    ZeroedBytes& operator=(const ZeroedBytes& o) {
      if (this != &o) copy_from(o);
      return *this;
    }
    ZeroedBytes& operator=(ZeroedBytes&& o) noexcept {
      std::swap(p_, o.p_);
      std::swap(n_, o.n_);
      return *this;
    }
    ~ZeroedBytes() { release(); }
    /// Replaces the contents with `n` zero bytes.
    void assign(size_t n, uint8_t /*zero*/);
    uint8_t* data() { return p_; }
    const uint8_t* data() const { return p_; }
    size_t size() const { return n_; }

   private:
    void release();
    void copy_from(const ZeroedBytes& o) {
      assign(o.n_, 0);
      if (o.n_) std::memcpy(p_, o.p_, o.n_);
    }
    uint8_t* p_ = nullptr;
    size_t n_ = 0;
  };
  ZeroedBytes mem_;  // size_bytes, viewed as pages of kDramPageBytes
  /// Derived, not saved: no in-flight slot is ready before this cycle (0 = scan now).
  uint64_t scan_after_ = 0;
  /// Derived, not saved: bit i set when t_.slots[i] is valid, so the per-cycle scans visit the
  /// requests in flight instead of all kDramMaxOutstanding slots (each ~130 bytes).
  uint64_t live_ = 0;
  static_assert(kDramMaxOutstanding <= 64, "live_ is a 64-bit mask");
  std::vector<uint8_t> touched_;  // per page: ever written (saved by save())
  // Per-page hash and version, valid unless the page's dirty flag is set. The per-cycle path only
  // sets dirty flags; digest(), page_hash() and page_version() refresh dirty pages (re-hash and
  // take a new version), so checkpoints and digests pay only for pages written since.
  mutable std::vector<uint8_t> dirty_;
  mutable std::vector<uint64_t> page_hash_;
  mutable std::vector<uint64_t> page_version_;
  mutable std::vector<uint8_t> digest_scratch_;  // digest()'s buffer (not state)
};

}  // namespace bud::emu
