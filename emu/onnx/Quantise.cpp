// The importer: calibration, activation scales, and the emitted workload (docs/import.md,
// "Quantisation").
#include "emu/onnx/GraphImporter.h"

#include <algorithm>
#include <cmath>

#include <google/protobuf/text_format.h>

// Rng.h uses unsigned __int128, which -Wpedantic flags; it is a GCC/Clang extension bud relies on.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include "emu/core/Rng.h"
#pragma GCC diagnostic pop
#include "workload.pb.h"

namespace bud::onnx_import::detail {

FloatTensor GraphImporter::make_input(uint64_t seed) const {
  emu::Rng rng(seed);
  FloatTensor v(static_cast<size_t>(values_[static_cast<size_t>(input_value_)].shape.elements()));
  for (double& x : v) x = static_cast<double>(rng.range(-1000000, 1000000)) / 1e6;
  return v;
}

std::vector<FloatTensor> GraphImporter::run_float(const FloatTensor& input) const {
  std::vector<FloatTensor> vals(values_.size());
  vals[static_cast<size_t>(input_value_)] = input;
  for (const Node& n : nodes_) vals[static_cast<size_t>(n.out)] = run_node(n, values_, vals);
  return vals;
}

// A POST multiplier/shift for the real factor m > 0: the largest shift that keeps |mult| in
// [1, 16383] (most precision without approaching int16 overflow).
workload::Quant post_quant(double m) {
  workload::Quant q;
  for (int s = 31; s >= 0; --s) {
    const double mult = std::round(std::ldexp(m, s));
    if (mult <= 16383) {
      q.shift = static_cast<uint8_t>(s);
      q.mult = static_cast<int16_t>(std::max(1.0, mult));
      return q;
    }
  }
  q.shift = 0;
  q.mult = 16383;
  return q;
}

std::optional<Error> GraphImporter::quantise() {
  // Per-tensor activation scales: the largest magnitude over the calibration inputs / 127.
  std::vector<double> maxabs(values_.size(), 0.0);
  for (int i = 0; i < kCalibrationSamples; ++i) {
    uint64_t seed = kCalibrationSeed + static_cast<uint64_t>(i);
    const auto vals = run_float(make_input(emu::Rng::splitmix64(seed)));
    for (size_t v = 0; v < vals.size(); ++v)
      for (double x : vals[v]) maxabs[v] = std::max(maxabs[v], std::abs(x));
  }
  for (size_t v = 0; v < values_.size(); ++v)
    values_[v].scale =
        values_[v].fixed_scale ? *values_[v].fixed_scale : std::max(maxabs[v], 1e-6) / 127.0;
  // Max pooling keeps the scale (exact in int8).
  for (const Node& n : nodes_)
    if (n.kind == Kind::Host && n.host.op == HostOp::MaxPool &&
        !values_[static_cast<size_t>(n.out)].fixed_scale)
      values_[static_cast<size_t>(n.out)].scale =
          values_[static_cast<size_t>(n.in.value)].scale * n.in.mult;
  // Add: POST has one multiplier for the sum, so both operands need the same scale. Give the
  // operand whose producer can requantise freely (an NPU or host layer read only by this add)
  // the scale of the other.
  for (const Node& n : nodes_) {
    if (n.kind != Kind::Add) continue;
    auto eff = [&](const View& v) { return values_[static_cast<size_t>(v.value)].scale * v.mult; };
    if (std::abs(eff(n.in) - eff(n.other)) <= 1e-9 * eff(n.in)) continue;
    auto settable = [&](const View& v) {
      const Value& val = values_[static_cast<size_t>(v.value)];
      return val.producer >= 0 && !val.fixed_scale && val.consumers == 1;
    };
    if (settable(n.other) && settable(n.in)) {
      // Both free: the larger scale, so that neither saturates.
      const double common = std::max(eff(n.in), eff(n.other));
      for (const View* v : {&n.in, &n.other}) {
        Value& val = values_[static_cast<size_t>(v->value)];
        val.scale = common / v->mult;
        val.fixed_scale = val.scale;
      }
    } else if (settable(n.other)) {
      Value& val = values_[static_cast<size_t>(n.other.value)];
      val.scale = eff(n.in) / n.other.mult;
      val.fixed_scale = val.scale;
    } else if (settable(n.in)) {
      Value& val = values_[static_cast<size_t>(n.in.value)];
      val.scale = eff(n.other) / n.in.mult;
      val.fixed_scale = val.scale;
    } else {
      return Error{file_ + ": layer '" + n.name + "' (Add): operands have different scales (" +
                   std::to_string(eff(n.in)) + ", " + std::to_string(eff(n.other)) +
                   ") and neither producer can be requantised to match"};
    }
  }
  return std::nullopt;
}

Result<std::string> GraphImporter::emit() const {
  workload::WorkloadSpec spec;
  spec.set_name(file_.substr(file_.find_last_of('/') + 1));
  spec.set_description("imported from " + file_ + " by bud import (" +
                       (float_model_ ? "float model quantised by bud" : "quantised model") + ")");
  spec.set_seed(opt_.seed);
  const Value& iv = values_[static_cast<size_t>(input_value_)];
  if (iv.shape.rank == 2) {
    spec.add_input_shape(static_cast<int32_t>(iv.shape.h));
    spec.add_input_shape(static_cast<int32_t>(iv.shape.c));
  } else {
    for (int64_t d : {iv.shape.h, iv.shape.w, iv.shape.c})
      spec.add_input_shape(static_cast<int32_t>(d));
  }
  // The run input, quantised with the input's scale.
  const FloatTensor in = make_input(opt_.seed);
  std::string bytes(in.size(), '\0');
  for (size_t i = 0; i < in.size(); ++i)
    bytes[i] = static_cast<char>(
        static_cast<int8_t>(std::clamp(std::round(in[i] / iv.scale), -128.0, 127.0)));
  spec.set_input_data(bytes);

  auto ref_name = [&](const View& v) -> std::string {
    const Value& val = values_[static_cast<size_t>(v.value)];
    return val.producer < 0 ? "input" : nodes_[static_cast<size_t>(val.producer)].name;
  };
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    workload::LayerSpec* l = spec.add_layer();
    l->set_name(n.name);
    const int prev = i == 0 ? input_value_ : nodes_[i - 1].out;
    if (n.in.value != prev) l->set_input(ref_name(n.in));
    const double s_in = values_[static_cast<size_t>(n.in.value)].scale * n.in.mult;
    const double s_out = values_[static_cast<size_t>(n.out)].scale;
    switch (n.kind) {
      case Kind::Conv:
      case Kind::Dense: {
        // Weight scales: the model's (QLinear*), else max |w| / 127 over the tensor or, per
        // channel (ImportOptions::per_channel), over each output channel's weights.
        const auto cols = static_cast<size_t>(n.c_out);
        std::vector<double> wmax(cols, 0.0);
        double wmax_all = 0;
        for (size_t j = 0; j < n.w.size(); ++j) {
          const double a = std::abs(static_cast<double>(n.w[j]));
          wmax[j % cols] = std::max(wmax[j % cols], a);
          wmax_all = std::max(wmax_all, a);
        }
        // A transposed output runs the channels along the pixels: one factor for the tensor.
        const bool per_channel = n.fixed_w_scale.empty() ? opt_.per_channel && !n.transpose_out
                                                         : n.fixed_w_scale.size() > 1;
        std::vector<double> ws(cols);
        for (size_t c = 0; c < cols; ++c) {
          if (!n.fixed_w_scale.empty())
            ws[c] = n.fixed_w_scale[per_channel ? c : 0];
          else if (per_channel && wmax[c] > 0)
            ws[c] = wmax[c] / 127.0;
          else  // per tensor, or an all-zero channel: the tensor's scale
            ws[c] = std::max(wmax_all, 1e-12) / 127.0;
        }
        std::string wq(n.w.size(), '\0');
        for (size_t j = 0; j < n.w.size(); ++j)
          wq[j] = static_cast<char>(
              static_cast<int8_t>(std::clamp(std::round(n.w[j] / ws[j % cols]), -127.0, 127.0)));
        l->set_weights(wq);
        for (size_t c = 0; c < n.b.size(); ++c)
          l->add_bias(static_cast<int32_t>(
              std::clamp(std::round(n.b[c] / (s_in * ws[c])), -2147483648.0, 2147483647.0)));
        if (per_channel) {
          for (size_t c = 0; c < cols; ++c) {
            const workload::Quant q = post_quant(s_in * ws[c] / s_out);
            l->mutable_quant()->add_channel_mult(q.mult);
            l->mutable_quant()->add_channel_shift(q.shift);
          }
        } else {
          const workload::Quant q = post_quant(s_in * ws[0] / s_out);
          l->mutable_quant()->set_mult(q.mult);
          l->mutable_quant()->set_shift(q.shift);
        }
        if (n.kind == Kind::Conv) {
          auto* c = l->mutable_conv2d();
          c->set_c_out(static_cast<int32_t>(n.c_out));
          c->set_kh(static_cast<int32_t>(n.kh));
          c->set_kw(static_cast<int32_t>(n.kw));
          if (n.stride != 1) c->set_stride(static_cast<int32_t>(n.stride));
          if (!n.pads.symmetric())
            for (int64_t p : {n.pads.top, n.pads.left, n.pads.bottom, n.pads.right})
              c->add_pads(static_cast<int32_t>(p));
          else if (n.pads.top != 0)
            c->set_pad(static_cast<int32_t>(n.pads.top));
          if (n.groups != 1) c->set_groups(static_cast<int32_t>(n.groups));
          c->set_relu(n.relu);
        } else {
          auto* d = l->mutable_dense();
          d->set_m(static_cast<int32_t>(n.in.shape.pixels()));
          d->set_k(static_cast<int32_t>(n.in.shape.c));
          d->set_n(static_cast<int32_t>(n.c_out));
          d->set_relu(n.relu);
          if (n.transpose_out) d->set_transpose_output(true);
        }
        break;
      }
      case Kind::Add:
      case Kind::Relu: {
        const workload::Quant q = post_quant(s_in / s_out);
        l->mutable_quant()->set_mult(q.mult);
        l->mutable_quant()->set_shift(q.shift);
        if (n.kind == Kind::Add) {
          l->mutable_add()->set_other(ref_name(n.other));
          l->mutable_add()->set_relu(n.relu);
        } else {
          l->mutable_relu();
        }
        break;
      }
      case Kind::MatMul: {
        // The workload's matmul is x . other^T: `other` is the transposed view's value, or the
        // producer that writes B^T.
        const double s_other =
            values_[static_cast<size_t>(n.other.value)].scale * n.other.mult;
        const workload::Quant q = post_quant(s_in * s_other / s_out);
        l->mutable_quant()->set_mult(q.mult);
        l->mutable_quant()->set_shift(q.shift);
        l->mutable_matmul()->set_other(ref_name(n.other));
        l->mutable_matmul()->set_relu(n.relu);
        break;
      }
      case Kind::Host: {
        auto* h = l->mutable_host();
        h->set_in_scale(static_cast<float>(s_in));
        h->set_out_scale(static_cast<float>(s_out));
        if (workload::host_op_reads_other(n.host.op)) {
          h->set_other(ref_name(n.other));
          h->set_other_scale(static_cast<float>(
              values_[static_cast<size_t>(n.other.value)].scale * n.other.mult));
        }
        switch (n.host.op) {
          case HostOp::Softmax:
            h->set_op(workload::HostSpec::SOFTMAX);
            break;
          case HostOp::Gelu:
            h->set_op(workload::HostSpec::GELU);
            break;
          case HostOp::Sigmoid:
            h->set_op(workload::HostSpec::SIGMOID);
            break;
          case HostOp::Concat:
            h->set_op(workload::HostSpec::CONCAT);
            break;
          case HostOp::LayerNorm:
            h->set_op(workload::HostSpec::LAYER_NORM);
            for (float g : n.host.gamma) h->add_gamma(g);
            for (float b : n.host.beta) h->add_beta(b);
            h->set_epsilon(n.host.epsilon);
            break;
          case HostOp::MaxPool:
            h->set_op(workload::HostSpec::MAX_POOL);
            h->set_kh(static_cast<int32_t>(n.host.kh));
            h->set_kw(static_cast<int32_t>(n.host.kw));
            h->set_stride(static_cast<int32_t>(n.host.stride));
            h->set_pad(static_cast<int32_t>(n.host.pad));
            break;
          case HostOp::MatMul:
            h->set_op(workload::HostSpec::MATMUL);
            h->set_transpose_other(n.other.transposed);
            break;
        }
        break;
      }
    }
  }
  std::string text;
  google::protobuf::TextFormat::Printer printer;
  if (!printer.PrintToString(spec, &text)) return Error{file_ + ": cannot print the workload"};
  return "# Generated by `bud import` from " + file_ + ". Scales: docs/import.md.\n" + text;
}

}  // namespace bud::onnx_import::detail
