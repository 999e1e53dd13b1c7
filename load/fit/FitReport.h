// The fit matrix rendered (`bud fit`): one JSON document (what --json prints and the HTML report
// reads) and the tables for people. Both show the synthetic GEMM's winner beside the production
// models' winner.
#pragma once

#include <string>

#include "debugger/json/Json.h"
#include "load/fit/FitMatrix.h"

namespace bud::fit {

/// How the matrix was asked for, for the report's header.
struct FitConditions {
  std::string arrivals;   ///< "bursty", "poisson", ...
  uint32_t requests = 0;  ///< per load point
  uint64_t seed = 0;      ///< of the arrivals
  double burst_factor = 0, burst_fraction = 0, burst_period_us = 0;
  uint32_t max_batch = 1;
  double window_us = 0;
  uint32_t queue_bound = 0;
  std::string admission;
  double sla_p99_us = 0;
  std::string energy_table;
};

/// {"conditions": {...}, "configs": [...], "models": [...], "gemm": ..., "cells": [...],
/// "winners": {"models": [...], "gemm": ..., "production": ..., "differ": bool}}.
json::Json fit_json(const FitMatrix& m, const FitConditions& c);

/// The fit matrix table, memory stalls by layer type, the sustained point per cell and the
/// winners.
std::string fit_text(const FitMatrix& m, const FitConditions& c);

}  // namespace bud::fit
