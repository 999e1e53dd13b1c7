// Where a design's cycles go, per handshake (docs/designs.md, "Profiling a design"): every cycle
// of a run, each valid/ready pair is in exactly one of four states - busy (valid && ready: a
// transfer), starved (ready without valid), back-pressured (valid without ready) or idle
// (neither) - counted as integers, so the four always sum to the cycles profiled. The handshakes
// are the declared [[stage]]s in pipeline order, then every AXI-Stream port, AXI4 channel and
// AXI4-Lite control channel no stage already covers. Alongside: every declared counter sampled at
// the end of every interval, and (when asked for) the runs of equal state as spans for a trace.
//
// DesignHarness feeds it: sample_handshakes() after the model settles (the states the clock edge
// sees, the moment the harness counts stage transactions), with the valid/ready bits the harness
// already sampled for the pairs it shares with it, and end_cycle() after the edge. Neither
// allocates, locks, throws or does I/O: every buffer is reserved by make(), the counter series
// halves its resolution in place when full, and a handshake's spans stop at their share of the
// span budget (truncated_at says where).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "design/DesignFile.h"
#include "design/LoadedModel.h"

namespace bud::design {

class DesignHarness;

/// The state of one handshake on one cycle. The values index HandshakeProfile::Handshake::cycles.
enum class HandshakeState : uint8_t { Busy = 0, Starved = 1, BackPressured = 2, Idle = 3 };
inline constexpr size_t kHandshakeStates = 4;
/// "busy", "starved", "backpressured", "idle" (the JSON keys and trace span names).
const char* state_name(HandshakeState s);

/// Which side of a handshake drives valid (the producer) or ready (the consumer).
enum class Party : uint8_t { Design, Source, Sink, Memory, Firmware };

/// What a handshake is.
enum class HandshakeKind : uint8_t { Stage, Stream, Axi4, Control };
/// "stage", "stream", "axi4", "control".
const char* kind_name(HandshakeKind k);

struct ProfileOptions {
  /// Cycles between counter samples (> 0). When the series is full it keeps every other sample
  /// and the interval doubles (HandshakeProfile::interval() is the one in effect).
  uint64_t interval = 1024;
  /// Counter samples kept per counter before the interval doubles.
  uint32_t max_samples = 4096;
  /// Record spans of equal state (for a trace): at most this many in all, shared equally among
  /// the handshakes. 0: no spans.
  uint64_t max_spans = 0;
  /// The quiet cycles the harness waits before it calls a drained run finished (RunOptions): the
  /// expected stretch without a transfer at the end of a run, told apart from a wait.
  uint64_t quiet_cycles = 0;
};

class HandshakeProfile {
 public:
  /// A run of consecutive cycles in one state: cycles [start, next span's start or the end).
  /// Packed in 8 bytes (the start cycle above the 2-bit state): a trace's spans are most of the
  /// profile's memory.
  struct Span {
    uint64_t bits;
    uint64_t start() const { return bits >> 2; }
    HandshakeState state() const { return static_cast<HandshakeState>(bits & 3); }
  };
  struct Handshake {
    std::string name;  ///< the stage's name, or "PORT.CHANNEL" (AXI4, "control.aw"), "axis.STREAM"
    HandshakeKind kind = HandshakeKind::Stage;
    std::optional<size_t> stage;  ///< index among the design file's [[stage]]s (pipeline order)
    Party producer = Party::Design, consumer = Party::Design;
    std::string port;  ///< the stream or AXI4 port behind the handshake ("" for a plain stage)
    std::string valid_signal, ready_signal;  ///< ready "" when the stage has none (always ready)
    std::array<uint64_t, kHandshakeStates> cycles{};  ///< cycles in each state (HandshakeState)
    /// The same up to the last cycle with a transfer on any handshake (active_cycles()): the
    /// run without its quiet end.
    std::array<uint64_t, kHandshakeStates> active{};
    std::vector<Span> spans;
    std::optional<uint64_t> truncated_at;  ///< spans stopped here: the share of the budget was used
    uint64_t count(HandshakeState s) const { return cycles[static_cast<size_t>(s)]; }
  };

  /// Binds to `harness` (its stages' and streams' signal indices, the AXI ports' signals by name
  /// once, here) for `spec`, the file the harness was made from. nullopt and `error` when
  /// options.interval is 0 or a channel signal is missing (check_design() rules that out).
  static std::optional<HandshakeProfile> make(const DesignSpec& spec, const DesignHarness& harness,
                                              const ProfileOptions& options, std::string& error);

  /// This cycle's handshake states, from the settled model before the edge: the pairs the
  /// harness samples from its bits (`valid`, `ready`: DesignHarness::valid_bits()), the others
  /// read here.
  void sample_handshakes(const uint64_t* valid, const uint64_t* ready) {
    uint32_t engaged = 0;
    bool moved = false;
    for (size_t i = 0; i < bound_.size(); ++i) {
      const Bound& b = bound_[i];
      bool v, r;
      if (b.shared >= 0) {
        const auto w = static_cast<size_t>(b.shared) / 64, bit = static_cast<size_t>(b.shared) % 64;
        v = (valid[w] >> bit) & 1;
        r = (ready[w] >> bit) & 1;
      } else {
        v = b.valid.get() != 0;
        r = !b.has_ready || b.ready.get() != 0;
      }
      const auto s = static_cast<uint8_t>((v ? 0 : 1) | (r ? 0 : 2));
      states_[i] = s;
      engaged |= s != static_cast<uint8_t>(HandshakeState::Idle);
      moved |= s == static_cast<uint8_t>(HandshakeState::Busy);
    }
    // The counts up to the last transfer (Handshake::active): taken once, on the first cycle
    // without one, rather than copied on every cycle with one.
    if (moved) {
      active_cycles_ = cycles_ + 1;
      snapshot_ = false;
    } else if (!snapshot_) {
      std::copy(counts_.begin(), counts_.end(), active_.begin());
      snapshot_ = true;
    }
    for (size_t i = 0; i < bound_.size(); ++i) {
      const uint8_t s = states_[i];
      ++counts_[kHandshakeStates * i + s];
      Bound& b = bound_[i];
      if (b.span_budget == 0 || s == b.last) continue;
      b.last = s;
      Handshake& h = handshakes_[i];
      if (h.spans.size() == b.span_budget) {
        if (!h.truncated_at) h.truncated_at = cycles_;
        continue;
      }
      h.spans.push_back(Span{cycles_ << 2 | s});
    }
    all_idle_ += engaged == 0;
  }
  /// Ends the cycle (after the edge, counters updated): samples the counters at each interval.
  void end_cycle(const DesignHarness& harness) {
    ++cycles_;
    if (++since_sample_ == interval_) sample_counters(harness);
  }
  /// After the run: the counters' final values (the totals), and each handshake's cycles and
  /// active counts.
  void finish(const DesignHarness& harness);

  /// The handshakes; their `cycles` and `active` counts are as of the last finish().
  const std::vector<Handshake>& handshakes() const { return handshakes_; }
  /// Cycles profiled (the harness's cycles after reset).
  uint64_t cycles() const { return cycles_; }
  /// Cycles up to and including the last one with a transfer on any handshake.
  uint64_t active_cycles() const { return active_cycles_; }
  /// ProfileOptions::quiet_cycles.
  uint64_t quiet_cycles() const { return quiet_cycles_; }
  /// The run ended with no more than its quiet cycles after the last transfer (it drained): the
  /// readings then leave that quiet end out. A longer end (a stall, a wait, the cycle limit)
  /// stays in: that is where the run went.
  bool quiet_end() const { return cycles_ - active_cycles_ <= quiet_cycles_; }
  /// The cycles the readings are over (active_cycles() after a quiet end, else cycles()), and
  /// `h`'s counts over them.
  uint64_t reading_cycles() const { return quiet_end() ? active_cycles_ : cycles_; }
  const std::array<uint64_t, kHandshakeStates>& reading_counts(const Handshake& h) const {
    return quiet_end() ? h.active : h.cycles;
  }
  /// Cycles where every handshake was idle.
  uint64_t all_idle_cycles() const { return all_idle_; }
  /// The counters' names, in design file order.
  const std::vector<std::string>& counter_names() const { return counter_names_; }
  /// The counter sampling interval in effect (cycles), and the one asked for.
  uint64_t interval() const { return interval_; }
  uint64_t requested_interval() const { return requested_interval_; }
  /// Samples taken: sample i was at the end of cycle (i + 1) * interval().
  size_t samples() const { return samples_; }
  /// Counter `c`'s value at the end of sample `i`'s cycle.
  uint64_t sample(size_t i, size_t c) const { return series_[i * counter_names_.size() + c]; }
  /// Counter `c`'s value after the last cycle (finish()).
  uint64_t total(size_t c) const { return totals_[c]; }
  /// Cap on the trace's spans given at make(), and whether any handshake's spans were cut.
  uint64_t max_spans() const { return max_spans_; }
  bool truncated() const;

 private:
  struct Bound {  // the per-cycle reading of handshake i (handshakes_[i])
    int32_t shared = -1;  // the harness's pair (its bits), or -1: read valid and ready here
    PortRef valid, ready;
    bool has_ready = false;
    size_t span_budget = 0;
    uint8_t last = 0xff;  // the state of the open span (none yet)
  };
  HandshakeProfile() = default;
  void sample_counters(const DesignHarness& harness);
  std::vector<Handshake> handshakes_;
  std::vector<Bound> bound_;
  // Hot per-cycle counts, contiguous: kHandshakeStates per handshake; active_ is their value at
  // the last transfer when snapshot_ is set (else counts_ itself is).
  std::vector<uint64_t> counts_, active_;
  std::vector<uint8_t> states_;  // this cycle's, per handshake
  bool snapshot_ = false;
  std::vector<std::string> counter_names_;
  std::vector<uint64_t> series_, totals_;
  size_t samples_ = 0, max_samples_ = 0;
  uint64_t cycles_ = 0, all_idle_ = 0, since_sample_ = 0, active_cycles_ = 0, quiet_cycles_ = 0;
  uint64_t interval_ = 0, requested_interval_ = 0, max_spans_ = 0;
};

}  // namespace bud::design
