#include "profile/Profiler.h"

#include "emu/run/Designs.h"

namespace bud::profile {

ProfiledRun run_profiled(const run::PreparedRun& prepared, const run::RunOptions& options) {
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
  drive::Driver driver(*emu);
  driver.add(*out.attribution);
  out.report = run::finish(prepared, options, driver);
  driver.remove(*out.attribution);
  out.attribution->finish();
  return out;
}

}  // namespace bud::profile
