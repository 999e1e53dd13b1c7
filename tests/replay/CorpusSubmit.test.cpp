// bud corpus submit --slurm against a stand-in sbatch (the real cluster is corpus:slurm-e2e): the
// array script, the merge job's dependency on the array, --dry-run, and a failing sbatch.
#include <catch2/catch.hpp>
#include <string>

#include "ReplayTestSupport.h"

using namespace bud;

namespace {

std::string q(const std::filesystem::path& f) { return "'" + f.string() + "'"; }

}  // namespace

TEST_CASE("bud corpus submit --slurm: an array, then a merge job after any end of it",
          "[replay][submit]") {
  const auto dir = test::temp_dir("submit");
  const std::string corpus = BUD_REPLAY_CORPUS;
  // Prints job 123 (with a cluster name, as sbatch --parsable does on federations), then 124.
  const auto fake = dir / "sbatch";
  {
    std::ofstream f(fake);
    f << "#!/bin/sh\necho \"$@\" >>" << q(dir / "calls") << "\n"
      << "if [ -f " << q(dir / "once") << " ]; then echo 124; else touch " << q(dir / "once")
      << "; echo '123;cluster'; fi\n";
  }
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  CHECK(test::shell(test::bud_exe() + " corpus submit --slurm " + q(corpus) + " --out " +
                    q(dir / "run") + " --sbatch " + q(fake) + " --partition ci --time 10:00 -- " +
                    "--allow-revision-mismatch >" + q(dir / "out.txt")) == 0);
  const auto out = test::slurp((dir / "out.txt").string());
  CHECK(out.find("submitted replay array job 123 (4 tasks, 4 packets)") != std::string::npos);
  CHECK(out.find("submitted merge job 124 (after any end of 123)") != std::string::npos);
  const auto calls = test::slurp((dir / "calls").string());
  CHECK(calls.find("--parsable " + (dir / "run" / "replay.sbatch").string()) != std::string::npos);
  CHECK(calls.find("--parsable --dependency=afterany:123 " +
                   (dir / "run" / "merge.sbatch").string()) != std::string::npos);
  const auto array = test::slurp((dir / "run" / "replay.sbatch").string());
  CHECK(array.find("#SBATCH --array=0-3\n") != std::string::npos);
  CHECK(array.find("#SBATCH --partition=ci\n") != std::string::npos);
  CHECK(array.find("#SBATCH --time=10:00\n") != std::string::npos);
  CHECK(array.find(" replay '" + corpus + "' --results '" + (dir / "run" / "results").string() +
                   "' '--allow-revision-mismatch'") != std::string::npos);
  const auto merge = test::slurp((dir / "run" / "merge.sbatch").string());
  CHECK(merge.find(" corpus merge --expect-shards 4 ") != std::string::npos);

  SECTION("--dry-run writes the scripts and submits nothing") {
    std::filesystem::remove(dir / "calls");
    CHECK(test::shell(test::bud_exe() + " corpus submit --slurm " + q(corpus) + " --out " +
                      q(dir / "dry") + " --shards 2 --sbatch " + q(fake) + " --dry-run >" +
                      q(dir / "dry.txt")) == 0);
    CHECK_FALSE(std::filesystem::exists(dir / "calls"));
    CHECK(test::slurp((dir / "dry" / "replay.sbatch").string()).find("--array=0-1\n") !=
          std::string::npos);
    CHECK(test::slurp((dir / "dry.txt").string()).find("--dependency=afterany:ARRAY_JOB_ID") !=
          std::string::npos);
  }
  SECTION("a failing sbatch is exit 3 with its message") {
    CHECK(test::shell(test::bud_exe() + " corpus submit --slurm " + q(corpus) + " --out " +
                      q(dir / "f") + " --sbatch /bin/false --json >" + q(dir / "f.json") +
                      " 2>/dev/null") == 3);
    const auto j = test::slurp((dir / "f.json").string());
    CHECK(j.find("\"exit_code\":3") != std::string::npos);
    CHECK(j.find("/bin/false") != std::string::npos);
  }
}

TEST_CASE("bud corpus submit --slurm P.bpk: one packet's windows as the array's shards",
          "[replay][submit][windows]") {
  const auto dir = test::temp_dir("submit_windows");
  const auto packet = std::filesystem::path(BUD_REPLAY_CORPUS) / "clean_mlp.bpk";
  CHECK(test::shell(test::bud_exe() + " corpus submit --slurm " + q(packet) + " --out " +
                    q(dir / "run") + " --shards 3 --dry-run >" + q(dir / "out.txt")) == 0);
  CHECK(test::slurp((dir / "out.txt").string()).find("(3 tasks, 1 packet of ") !=
        std::string::npos);
  const auto array = test::slurp((dir / "run" / "replay.sbatch").string());
  CHECK(array.find("#SBATCH --array=0-2\n") != std::string::npos);
  CHECK(array.find(" replay '" + packet.string() + "' --results ") != std::string::npos);
  // A file that is not a packet is bad input naming it.
  std::ofstream(dir / "junk.bpk") << "junk";
  CHECK(test::shell(test::bud_exe() + " corpus submit --slurm " + q(dir / "junk.bpk") +
                    " --dry-run 2>" + q(dir / "err.txt")) == 2);
  CHECK(test::slurp((dir / "err.txt").string()).find("junk.bpk") != std::string::npos);
}
