// `bud run --design FILE --triggers T`: a design file's run with a trigger file armed from
// cycle 0 (docs/designs.md, "Triggers on a design"). The design's model runs as its emulator
// (design/DesignEmulator.h) on the run driver, with the trigger engine taking part exactly as in
// `bud run W --triggers T`: log, capture (an FST window of the design's signals, re-executed on
// a replica), checkpoint, halt and record. The run ends as `bud design run` ends it (drained, an
// error, the cycle limit) and is checked the same way (design/DesignRun.h finish_run), so the
// report and the stage digests equal the untriggered run's unless a trigger halted it.
#pragma once

namespace bud::cli {

struct RunCommandOptions;

/// Exit status as `bud design run` (0 pass, 1 fail, 3 cycle limit, 9/10/11 its errors), 1 when a
/// trigger halted the run, 2 an invalid trigger file (nothing is run).
int run_design_with_triggers(const RunCommandOptions& options);

}  // namespace bud::cli
