#include "tools/bud/ImportCommand.h"

#include <cstdio>
#include <fstream>
#include <iostream>

#include "debugger/json/Json.h"
#include "emu/onnx/Importer.h"
#include "emu/run/RunJob.h"
#include "tools/bud/Output.h"

namespace bud::cli {

using json::Json;

void setup_import(CLI::App& app, ImportOptions& options) {
  auto* sub = app.add_subcommand("import", "Import an ONNX model as a workload file");
  sub->footer(
      "Examples:\n"
      "  bud import examples/onnx/resnet_tiny.onnx -o resnet.textpb\n"
      "  bud import model.onnx --json -o w.textpb   # summary as one JSON object\n"
      "  bud import model.onnx --precision bf16     # its quality vs fp32 with BF16 layers\n"
      "  bud import model.onnx --per-channel -o w.textpb  # one weight scale per channel\n"
      "  bud run model.onnx                         # import and run in one step\n"
      "Float models are quantised by bud (calibration seed frozen); operators the NPU cannot run\n"
      "become host layers (docs/import.md). Exit status: 0 imported, 2 unreadable, malformed or\n"
      "unsupported model (one error naming the node; nothing written).");
  sub->add_option("model", options.model, "ONNX model file")->required();
  sub->add_option("-o,--output", options.output, "Workload file to write (default: stdout)");
  sub->add_option("--seed", options.seed, "Seed of the run input (default 1)");
  sub->add_option("--precision", options.precision,
                  "Measure the quality against the ONNX fp32 network at this precision: int8 "
                  "(default), bf16, auto or a FILE of `LAYER PRECISION` lines; the workload "
                  "written is the same")
      ->type_name("int8|bf16|auto|FILE");
  sub->add_flag("--per-channel", options.per_channel,
               "Quantise a float model's conv and dense weights per output channel (one scale "
               "and one POST factor per channel) instead of per tensor");
  sub->add_flag("--host-attention", options.host_attention,
               "Run activation x activation MatMuls (attention) on the host, the fallback, "
               "instead of as NPU matmul layers");
  sub->add_flag("--json", options.json, "Print the summary as one JSON object");
}

int run_import(const ImportOptions& options) {
  onnx_import::ImportOptions io;
  if (options.seed) io.seed = *options.seed;
  auto precision = run::read_precision(options.precision);
  if (!precision) return fail_command("import", options.json, 2, precision.error());
  io.precision = precision->text;
  io.precision_origin = precision->origin;
  io.per_channel = options.per_channel;
  io.host_attention = options.host_attention;
  auto r = onnx_import::import_file(options.model, io);
  if (!r) return fail_command("import", options.json, 2, r.error());
  if (!options.output.empty()) {
    if (!write_file_atomically(options.output, r->text))
      return fail_command("import", options.json, 2, options.output + ": cannot write");
  }
  const onnx_import::QuantError& e = r->error;
  if (options.json) {
    Json j = Json::object();
    j["model"] = options.model;
    j["output"] = options.output;
    j["onnx_nodes"] = r->onnx_nodes;
    j["layers"] = r->layers;
    j["host_layers"] = r->host_layers;
    j["float_model"] = r->float_model;
    j["per_channel"] = options.per_channel;
    j["host_attention"] = options.host_attention;
    j["output_layer"] = r->output_layer;
    j["output_scale"] = r->output_scale;
    j["quant_rms_error"] = e.rms_error;
    j["quant_max_abs_error"] = e.max_abs_error;
    j["quant_relative_error"] = e.relative();
    Json pj = Json::object();
    for (const auto& [layer, p] : r->precisions) pj[layer] = p;
    j["precisions"] = pj;
    Json q = Json::array();
    for (const auto& l : r->quality)
      q.push_back({{"layer", l.layer},
                   {"elements", l.elements},
                   {"snr_db", l.snr_db},
                   {"max_abs_error", l.max_abs_error},
                   {"mean_abs_error", l.mean_abs_error}});
    j["layer_quality"] = std::move(q);
    j["agreement"] = {{"inputs", r->agreement.inputs},
                      {"rows", r->agreement.rows},
                      {"top1", r->agreement.top1},
                      {"top5", r->agreement.top5}};
    std::cout << j.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
    return 0;
  }
  if (options.output.empty()) std::cout << r->text;
  std::FILE* out = options.output.empty() ? stderr : stdout;
  std::fprintf(out, "imported %s: %d ONNX nodes -> %d layers (%zu on the host)%s\n",
               options.model.c_str(), r->onnx_nodes, r->layers, r->host_layers.size(),
               options.output.empty() ? "" : (" -> " + options.output).c_str());
  for (const std::string& h : r->host_layers) std::fprintf(out, "  host layer %s\n", h.c_str());
  std::fprintf(out,
               "quantisation error vs fp32 (%s, output '%s', %llu values): rms %.4g (%.2f%% of "
               "rms %.4g), max %.4g\n",
               r->float_model ? "scales calibrated by bud" : "scales from the model",
               r->output_layer.c_str(), static_cast<unsigned long long>(e.elements), e.rms_error,
               100.0 * e.relative(), e.rms_reference, e.max_abs_error);
  const onnx_import::Agreement& a = r->agreement;
  std::fprintf(out,
               "output agreement with fp32 over %d generated inputs (%llu rows): top-1 %.1f%%, "
               "top-5 %.1f%%\n",
               a.inputs, static_cast<unsigned long long>(a.rows), 100.0 * a.top1, 100.0 * a.top5);
  if (!options.precision.empty())
    std::fprintf(out, "measured at --precision %s (the workload written is the int8 import)\n",
                 options.precision.c_str());
  std::fprintf(out, "  %-16s %-9s %10s %9s %12s %12s\n", "layer", "precision", "elements",
               "SNR dB", "max |err|", "mean |err|");
  for (const auto& l : r->quality) {
    std::string layer_precision;
    for (const auto& [layer, p] : r->precisions)
      if (layer == l.layer) layer_precision = p;
    std::fprintf(out, "  %-16s %-9s %10llu %9.1f %12.4g %12.4g\n", l.layer.c_str(),
                 layer_precision.c_str(), static_cast<unsigned long long>(l.elements), l.snr_db,
                 l.max_abs_error, l.mean_abs_error);
  }
  return 0;
}

}  // namespace bud::cli
