// Self-contained HTML reports with plots from matplotlib. A report is bud's data as JSON plus a
// script in tools/plots/ that lays out the page with bud_plots.py; bud never draws a plot itself.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace bud::plots {

/// Renders `data` into the page `out` with the plotting script `script`: a name in the plots
/// folder ("profile_report" -> tools/plots/profile_report.py) or a path. The page appears only
/// whole: nothing is left at `out` on failure. Returns an error message, empty on success.
///
/// The plots folder is $BUD_PLOTS_DIR if set, else the source tree's tools/plots; the
/// interpreter is $BUD_PYTHON if set, else the python3 that CMake found importing matplotlib.
std::string render_html(std::string_view script, const nlohmann::json& data,
                        const std::filesystem::path& out);

/// The script a name resolves to (see render_html).
std::filesystem::path script_path(std::string_view script);

}  // namespace bud::plots
