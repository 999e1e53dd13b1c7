#include "profile/Profiler.h"

#include "emu/run/Designs.h"

namespace bud::profile {

ProfiledRun run_profiled(const run::PreparedRun& prepared, const run::RunOptions& options,
                         uint64_t trace_window, const InterventionSource& interventions,
                         const std::function<void(const emu::Emulator&)>& at_end) {
  ProfiledRun out;
  std::string error;
  auto emu = emu::make_emulator(options.emulator, error);
  if (emu) error = run::start(prepared, options, *emu);
  if (!error.empty()) {
    out.error = error;
    out.bad_input = true;
    return out;
  }
  out.attribution = Attribution::attach(*emu, prepared.program, error);
  if (!out.attribution) {
    out.error = "cannot profile: " + error;
    return out;
  }
  std::vector<drive::Intervention> log;
  if (interventions) {
    auto resolved = interventions(*emu, error);
    if (!resolved) {
      out.attribution.reset();
      out.error = error;
      out.bad_input = true;
      return out;
    }
    log = std::move(*resolved);
  }
  out.design = emu->describe();
  drive::Driver driver(*emu);
  drive::InterventionActor actor(*emu, log);
  if (!log.empty()) driver.add(actor);
  driver.add(*out.attribution);
  if (trace_window > 0) {
    out.windows = std::make_unique<TraceWindows>(*emu, trace_window);
    driver.add(*out.windows);
  }
  // The host track serves the timeline and counts the host's CSR accesses for the energy
  // account (a design without a host CSR port has neither).
  std::string no_host;
  out.host = HostTrack::attach(*emu, prepared.program.commands.size(), no_host);
  if (out.host) driver.add(*out.host);
  out.report = run::finish(prepared, options, driver);
  driver.remove(*out.attribution);
  out.attribution->finish();
  out.end_cycle = emu->cycle();
  if (out.host) driver.remove(*out.host);
  if (at_end) at_end(*emu);
  if (out.windows) {
    driver.remove(*out.windows);
    out.windows->finish(emu->cycle());
  }
  return out;
}

}  // namespace bud::profile
