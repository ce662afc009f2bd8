// fixq model quantize | run | eval | info: whole models (fixq/model.h) from the command line.
// Arrays are .npy files in each graph input's and output's own layout (ValueLayout).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "cli/commands.h"
#include "fixq/arith.h"
#include "fixq/error.h"
#include "fixq/file_kind.h"
#include "fixq/gguf_file.h"  // printable()
#include "fixq/gru_ptq.h"
#include "fixq/metrics.h"
#include "fixq/model.h"
#include "fixq/npy.h"
#include "fixq/report.h"
#include "io/atomic_file.h"

namespace fixq::cli {
namespace {

struct Options {
  std::string model, float_model, out, config = "int8", scales = "pow2", method = "auto", rounding = "gptq";
  double target_cosine = 0.9999;
  bool target_given = false, no_bias_correction = false;
  std::vector<std::string> inputs;  // PATH, or NAME=PATH once per graph input
  bool frames = false, raw = false;
};

// A .npy of one graph input: float, or integers already quantized (int8 / int16).
struct InputFile {
  Shape shape;
  std::vector<float> f;
  std::vector<int32_t> q;
  int bits = 0;  // 0: float
};

InputFile read_input(const std::string& path) {
  InputFile in;
  const NpyArray a = load_npy(path);
  if (a.dtype == "|i1") {
    for (const int8_t v : load_npy_i8(path, &in.shape)) in.q.push_back(v);
    in.bits = 8;
  } else if (a.dtype == "<i2") {
    for (const int16_t v : load_npy_i16(path, &in.shape)) in.q.push_back(v);
    in.bits = 16;
  } else {
    in.f = load_npy_f32(path, &in.shape);
  }
  return in;
}

// The files given for the model's graph inputs, in Model::inputs' order; a State input
// without one starts from zeros (an empty array). One PATH alone is the one Sequence input.
std::vector<InputFile> read_inputs(const Model& m, const std::vector<std::string>& specs, const char* option) {
  std::map<std::string, std::string> by_name;
  int sequences = 0;
  std::string only;
  for (const int v : m.inputs)
    if (m.values[static_cast<size_t>(v)].kind == ValueKind::Sequence) ++sequences, only = m.values[static_cast<size_t>(v)].name;
  for (const std::string& s : specs) {
    const size_t eq = s.find('=');
    std::string name = eq == std::string::npos ? "" : s.substr(0, eq), path = eq == std::string::npos ? s : s.substr(eq + 1);
    if (eq != std::string::npos && m.find_value(name) < 0) {
      // A path that holds '=' itself, or a name the model lacks.
      require(std::ifstream(s).good(), option, " ", s, ": '", name, "' is no graph input of the model");
      name.clear(), path = s;
    }
    if (name.empty()) {
      require(sequences == 1 && specs.size() == 1, option, " ", s, ": the model has ", sequences,
              " sequence inputs; give each as NAME=FILE.npy");
      name = only;
    }
    require(std::count(m.inputs.begin(), m.inputs.end(), m.find_value(name)) == 1, option, " ", s, ": '", name,
            "' is no graph input of the model");
    require(by_name.emplace(name, path).second, option, ": '", name, "' is given twice");
  }
  std::vector<InputFile> out;
  for (const int v : m.inputs) {
    const ModelValue& val = m.values[static_cast<size_t>(v)];
    const auto it = by_name.find(val.name);
    if (it == by_name.end()) {
      require(val.kind == ValueKind::State, option, ": no file for graph input '", val.name, "' (give ", val.name,
              "=FILE.npy)");
      out.emplace_back();
      continue;
    }
    out.push_back(read_input(it->second));
  }
  return out;
}

std::vector<ModelArray> floats_of(const std::vector<InputFile>& files) {
  std::vector<ModelArray> out;
  for (const InputFile& f : files) {
    require(f.bits == 0, "a quantized (integer) input .npy needs a quantized model (.fixq)");
    out.push_back(ModelArray{f.shape, f.f});
  }
  return out;
}

bool any_integer(const std::vector<InputFile>& files) {
  return std::any_of(files.begin(), files.end(), [](const InputFile& f) { return f.bits != 0; });
}

// The positions of the batch, time and feature axes in a layout's array (-1: absent).
struct Axes {
  int b = -1, t = -1, c = -1;
  explicit Axes(const std::string& layout) {
    for (int i = 0; i < static_cast<int>(layout.size()); ++i) {
      const char a = layout[static_cast<size_t>(i)];
      (a == 'B' ? b : a == 'T' ? t : c) = i;
    }
  }
};

int64_t offset(const Shape& s, const Axes& a, int64_t b, int64_t t, int64_t c) {
  int64_t idx[3] = {0, 0, 0};
  if (a.b >= 0) idx[a.b] = b;
  idx[a.t] = t;
  idx[a.c] = c;
  int64_t o = 0;
  for (size_t i = 0; i < s.size(); ++i) o = o * s[i] + idx[i];
  return o;
}

// The whole-sequence forward through the streaming step, frame by frame: the inputs' frame t
// [B, C] each, the outputs' frames put back into their layouts (a State or "BC" output: the last).
template <class Stream, class Array>
std::vector<Array> through_frames(const Model& m, Stream& stream, const std::vector<Array>& inputs, int64_t B, int64_t T) {
  std::vector<Array> outs(m.outputs.size());
  for (int64_t t = 0; t < T; ++t) {
    std::vector<Array> frames(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const ModelValue& v = m.values[static_cast<size_t>(m.inputs[i])];
      if (v.kind != ValueKind::Sequence) continue;
      const Axes a(v.layout.axes);
      frames[i] = inputs[i];
      frames[i].shape = {B, v.features};
      frames[i].data.resize(static_cast<size_t>(B * v.features));
      for (int64_t b = 0; b < B; ++b)
        for (int64_t c = 0; c < v.features; ++c)
          frames[i].data[static_cast<size_t>(b * v.features + c)] =
              inputs[i].data[static_cast<size_t>(offset(inputs[i].shape, a, b, t, c))];
    }
    std::vector<Array> got = [&] {
      if constexpr (std::is_same_v<Array, ModelIntArray>)
        return stream.step_raw(frames);
      else
        return stream.step(frames);
    }();
    for (size_t o = 0; o < outs.size(); ++o) {
      const ModelValue& v = m.values[static_cast<size_t>(m.outputs[o])];
      if (v.kind == ValueKind::State || v.layout.axes == "BC") {  // the current state / frame: the last one stays
        outs[o] = std::move(got[o]);
        continue;
      }
      const Axes a(v.layout.axes);
      if (t == 0) {
        outs[o] = got[o];
        outs[o].shape.assign(v.layout.axes.size(), 0);
        outs[o].shape[static_cast<size_t>(a.t)] = T;
        outs[o].shape[static_cast<size_t>(a.c)] = v.features;
        if (a.b >= 0) outs[o].shape[static_cast<size_t>(a.b)] = B;
        outs[o].data.assign(static_cast<size_t>(B * T * v.features), 0);
      }
      for (int64_t b = 0; b < B; ++b)
        for (int64_t c = 0; c < v.features; ++c)
          outs[o].data[static_cast<size_t>(offset(outs[o].shape, a, b, t, c))] = got[o].data[static_cast<size_t>(b * v.features + c)];
    }
  }
  return outs;
}

// B and T of the inputs' first Sequence.
std::pair<int64_t, int64_t> batch_and_time(const Model& m, const std::vector<InputFile>& files) {
  for (size_t i = 0; i < files.size(); ++i) {
    const ModelValue& v = m.values[static_cast<size_t>(m.inputs[i])];
    if (v.kind != ValueKind::Sequence) continue;
    const Axes a(v.layout.axes);
    require(files[i].shape.size() == v.layout.axes.size(), "input '", v.name, "' has shape ", shape_str(files[i].shape),
            "; its layout is ", v.layout.axes);
    return {a.b >= 0 ? files[i].shape[static_cast<size_t>(a.b)] : 1, files[i].shape[static_cast<size_t>(a.t)]};
  }
  fail("the model has no sequence input");
}

// The float model of an ONNX file, or the quantized model of any other.
struct Loaded {
  std::unique_ptr<Model> float_model;
  std::unique_ptr<QuantizedModel> quantized;
  const Model& model() const { return float_model ? *float_model : quantized->model(); }
};

Loaded load_any(const std::string& path) {
  Loaded l;
  const FileKind kind = file_kind(path);
  if (kind == FileKind::Onnx) {
    l.float_model = std::make_unique<Model>(load_model_onnx(path));
  } else if (kind == FileKind::ModelQuantized || kind == FileKind::Safetensors) {  // a damaged header: load() says what
    l.quantized = std::make_unique<QuantizedModel>(QuantizedModel::load(path));
  } else {
    fail(path, ": is a ", to_string(kind), " file; fixq model reads an ONNX model or a quantized model (",
         to_string(FileKind::ModelQuantized), ", written by fixq model quantize)");
  }
  return l;
}

// Integer arrays of a quantized model's values and back (ModelValueQuant: per tensor, a
// State per row).
std::vector<float> dequantized(const ModelIntArray& a, const ModelValueQuant& q, bool state) {
  std::vector<float> out(a.data.size());
  const size_t per_row = state && !a.shape.empty() && a.shape[0] > 0 ? a.data.size() / static_cast<size_t>(a.shape[0]) : a.data.size();
  for (size_t i = 0; i < a.data.size(); ++i) {
    const size_t r = std::min(q.scale.size() - 1, per_row ? i / per_row : 0);
    out[i] = static_cast<float>(a.data[i] - q.zero_point[r]) * q.scale[r];
  }
  return out;
}

// Writes every output to a staging file next to its target, and renames them into place
// only when all were written: a failure to write (a full disk, a name that cannot be a
// file, a target that is a directory, all checked before the first rename) leaves DIR's
// files as they were. Only a rename itself failing midway (same directory, so rare) can
// leave the outputs before it renamed.
void save_outputs(const std::string& dir, const Model& m, const std::vector<ModelArray>* f,
                  const std::vector<ModelIntArray>* q) {
  std::vector<std::string> targets;
  for (size_t o = 0; o < m.outputs.size(); ++o) {
    const std::string& name = m.values[static_cast<size_t>(m.outputs[o])].name;
    require(!name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
                name.find('\0') == std::string::npos,
            "fixq model run: graph output '", gguf::printable(name), "' cannot be a file name in ", dir,
            " (it is empty, '.', '..' or holds a '/')");
    targets.push_back(dir + "/" + name + ".npy");
    std::error_code ec;
    require(!std::filesystem::is_directory(targets.back(), ec), "fixq model run: ", targets.back(),
            " is a directory; it would be output '", gguf::printable(name), "'");
  }
  make_directories(dir, "fixq model run: -o");
  std::vector<std::string> staged;
  // Removes the staging files unless every rename happened.
  struct Cleanup {
    std::vector<std::string>& files;
    ~Cleanup() {
      for (const std::string& s : files) ::unlink(s.c_str());
    }
  } cleanup{staged};
  const std::string suffix = ".run." + std::to_string(::getpid());
  for (size_t o = 0; o < targets.size(); ++o) {
    const std::filesystem::path t(targets[o]);
    const std::string path = (t.parent_path() / ("." + t.filename().string() + suffix)).string();
    staged.push_back(path);
    if (f) {
      save_npy_f32(path, (*f)[o].data.data(), (*f)[o].shape);
    } else if ((*q)[o].bits <= 8) {
      std::vector<int8_t> v((*q)[o].data.begin(), (*q)[o].data.end());
      save_npy_i8(path, v.data(), (*q)[o].shape);
    } else if ((*q)[o].bits <= 16) {
      std::vector<int16_t> v((*q)[o].data.begin(), (*q)[o].data.end());
      save_npy_i16(path, v.data(), (*q)[o].shape);
    } else {
      save_npy_i32(path, (*q)[o].data.data(), (*q)[o].shape);
    }
  }
  for (size_t o = 0; o < targets.size(); ++o)
    if (::rename(staged[o].c_str(), targets[o].c_str()) != 0)
      fail_io(errno, "fixq model run: ", targets[o], ": cannot rename ", staged[o], " over it");
  staged.clear();
  for (size_t o = 0; o < targets.size(); ++o)
    std::printf("%s %s\n", targets[o].c_str(), shape_str(f ? (*f)[o].shape : (*q)[o].shape).c_str());
}

void run_cmd(const Options& o) {
  const Loaded l = load_any(o.model);
  const Model& m = l.model();
  const std::vector<InputFile> files = read_inputs(m, o.inputs, "--input");
  require(!(o.raw && l.float_model), "--raw writes a quantized model's integers; ", o.model, " is a float model");
  const auto [B, T] = batch_and_time(m, files);
  // Every output is computed before the first is written: a failure writes nothing.
  if (l.float_model) {
    const std::vector<ModelArray> in = floats_of(files);
    std::vector<ModelArray> out;
    if (o.frames) {
      std::vector<ModelArray> states;
      for (size_t i = 0; i < in.size(); ++i)
        states.push_back(m.values[static_cast<size_t>(m.inputs[i])].kind == ValueKind::State ? in[i] : ModelArray{});
      ModelStream s(m, B, states);
      out = through_frames(m, s, in, B, T);
    } else {
      out = model_forward(m, in);
    }
    save_outputs(o.out, m, &out, nullptr);
    return;
  }
  const QuantizedModel& q = *l.quantized;
  const QuantizedModelInfo info = q.info();
  if (!any_integer(files) && !o.raw) {
    const std::vector<ModelArray> in = floats_of(files);
    std::vector<ModelArray> out;
    if (o.frames) {
      std::vector<ModelArray> states;
      for (size_t i = 0; i < in.size(); ++i)
        states.push_back(m.values[static_cast<size_t>(m.inputs[i])].kind == ValueKind::State ? in[i] : ModelArray{});
      QuantizedModelStream s(q, B, states);
      out = through_frames(m, s, in, B, T);
    } else {
      out = q.forward(in);
    }
    save_outputs(o.out, m, &out, nullptr);
    return;
  }
  // Integers: the given ones as they are, float ones quantized with their value's parameters.
  std::vector<ModelIntArray> in;
  for (size_t i = 0; i < files.size(); ++i) {
    const ModelValueQuant& vq = info.values[static_cast<size_t>(m.inputs[i])];
    ModelIntArray a;
    a.shape = files[i].shape;
    a.bits = vq.bits;
    if (files[i].bits != 0) {
      require(files[i].bits == (vq.bits <= 8 ? 8 : 16), "--input for '", vq.name, "' holds int", files[i].bits,
              " values; the model quantizes it to ", vq.bits, " bits");
      a.data = files[i].q;
    } else {
      const bool state = m.values[static_cast<size_t>(m.inputs[i])].kind == ValueKind::State;
      const size_t per_row = state && !a.shape.empty() && a.shape[0] > 0 ? files[i].f.size() / static_cast<size_t>(a.shape[0]) : files[i].f.size();
      for (size_t k = 0; k < files[i].f.size(); ++k) {
        const size_t r = std::min(vq.scale.size() - 1, per_row ? k / per_row : 0);
        require(std::isfinite(files[i].f[k]), "--input for '", vq.name, "' holds a NaN or infinity");
        a.data.push_back(static_cast<int32_t>(round_half_even_saturate(
            static_cast<double>(files[i].f[k]) / vq.scale[r] + vq.zero_point[r], vq.qmin(), vq.qmax())));
      }
    }
    in.push_back(std::move(a));
  }
  std::vector<ModelIntArray> out;
  if (o.frames) {
    std::vector<ModelArray> states;  // initial states go to the stream as floats
    for (size_t i = 0; i < in.size(); ++i) {
      const bool state = m.values[static_cast<size_t>(m.inputs[i])].kind == ValueKind::State;
      ModelArray s;
      if (state && !in[i].data.empty()) s = {in[i].shape, dequantized(in[i], info.values[static_cast<size_t>(m.inputs[i])], true)};
      states.push_back(std::move(s));
    }
    QuantizedModelStream s(q, B, states);
    out = through_frames(m, s, in, B, T);
  } else {
    out = q.forward_raw(in);
  }
  if (o.raw) {
    save_outputs(o.out, m, nullptr, &out);
    return;
  }
  std::vector<ModelArray> f;
  for (size_t k = 0; k < out.size(); ++k) {
    const int v = m.outputs[k];
    f.push_back({out[k].shape, dequantized(out[k], info.values[static_cast<size_t>(v)],
                                           m.values[static_cast<size_t>(v)].kind == ValueKind::State)});
  }
  save_outputs(o.out, m, &f, nullptr);
}

void quantize_cmd(const Options& o) {
  ModelQuantConfig cfg;
  cfg.preset = o.config;
  cfg.scales = parse_scale_kind(o.scales, "--scales");
  // --method auto: ranges by output error from the min/max observer; a method: its ranges as they are.
  const std::optional<CalibMethod> method = parse_range_method(o.method, "--method");
  cfg.range_search = !method;
  cfg.observer.method = method.value_or(CalibMethod::MinMax);
  cfg.rounding = parse_weight_rounding(o.rounding);
  cfg.bias_correction = !o.no_bias_correction;
  require(!o.target_given || o.config == "auto", "--target-cosine needs --config auto");
  cfg.target_cosine = o.target_cosine;
  cfg.validate();
  const Model m = load_model_onnx(o.model);
  const std::vector<ModelArray> calib = floats_of(read_inputs(m, o.inputs, "--calib"));
  const QuantizedModel q = QuantizedModel::quantize(m, {calib}, cfg);
  const QuantizedModelInfo info = q.info();
  if (o.config == "auto") {
    std::string wide;
    for (const QuantizedModelInfo::Op& op : info.ops)
      if (op.bits > 8) wide += (wide.empty() ? "" : ", ") + op.name;
    for (const int v : info.inputs)
      if (info.values[static_cast<size_t>(v)].bits > 8) wide += (wide.empty() ? "input " : ", input ") + info.values[static_cast<size_t>(v)].name;
    std::printf("auto: output cosine %.6f on the calibration data (target %.6f%s); 16-bit: %s; GEMMs int%d\n",
                *info.calib_cosine, cfg.target_cosine,
                *info.calib_cosine >= cfg.target_cosine ? ", met" : ", NOT met",
                wide.empty() ? "none" : wide.c_str(), info.gemm_bits);
  }
  q.save(o.out);
  std::printf("%s: %zu operators quantized (%s, %s scales, output cosine %.6f on the calibration data) -> %s\n",
              o.model.c_str(), m.nodes.size(), o.config.c_str(), to_string(cfg.scales).c_str(), *info.calib_cosine,
              o.out.c_str());
}

void eval_cmd(const Options& o) {
  const Model f = load_model_onnx(o.float_model);
  const QuantizedModel q = QuantizedModel::load(o.model);
  const std::vector<ModelArray> in = floats_of(read_inputs(f, o.inputs, "--input"));
  const std::vector<ModelArray> want = model_forward(f, in);
  const std::vector<ModelArray> got = q.forward(in);
  require(want.size() == got.size(), o.model, " has ", got.size(), " outputs, ", o.float_model, " ", want.size());
  std::printf("%-24s %10s %10s %10s\n", "output", "cosine", "SQNR dB", "maxerr");
  for (size_t k = 0; k < want.size(); ++k) {
    require(want[k].data.size() == got[k].data.size(), "output ", k, ": the models' outputs differ in shape");
    ErrorStats e;
    e.add(want[k].data.data(), got[k].data.data(), want[k].data.size());
    std::printf("%-24s %10.6f %10s %10.6f\n", f.values[static_cast<size_t>(f.outputs[k])].name.c_str(), e.cosine(),
                fmt_db(e.sqnr_db()).c_str(), e.maxerr());
  }
}

void info_cmd(const std::string& path) {
  const Loaded l = load_any(path);
  if (l.quantized) {
    std::printf("%s", l.quantized->info().to_string().c_str());
    return;
  }
  const Model& m = l.model();
  const auto value = [&](int v) {
    if (v < 0) return std::string("-");
    const ModelValue& x = m.values[static_cast<size_t>(v)];
    return x.name + (x.kind == ValueKind::State ? " [" + std::to_string(x.rows) + ", B, " : " [B, T, ") +
           std::to_string(x.features) + "]";
  };
  std::printf("float model %s: %zu operators\n", path.c_str(), m.nodes.size());
  for (const int v : m.inputs) std::printf("input   %s, layout %s\n", value(v).c_str(), m.values[static_cast<size_t>(v)].layout.axes.c_str());
  for (const int v : m.outputs) std::printf("output  %s, layout %s\n", value(v).c_str(), m.values[static_cast<size_t>(v)].layout.axes.c_str());
  for (const ModelNode& n : m.nodes) {
    std::string detail;
    if (n.op == ModelOp::Conv1d)
      detail = " kernel " + std::to_string(n.kernel) + " dilation " + std::to_string(n.dilation) + " groups " + std::to_string(n.groups);
    else if (n.op == ModelOp::Slice)
      detail = " features " + std::to_string(n.begin) + ".." + std::to_string(n.end);
    else if (n.op == ModelOp::Gru)
      detail = " " + std::to_string(n.gru->num_layers) + " layer(s), hidden " + std::to_string(n.gru->hidden_size) +
               (n.gru->bidirectional ? ", bidirectional, " : ", ") + to_string(n.gru->cell_kind);
    std::string ins, outs;
    for (const int v : n.inputs) ins += (ins.empty() ? "" : ", ") + value(v);
    for (const int v : n.outputs) outs += (outs.empty() ? "" : ", ") + value(v);
    std::printf("%-8s %s: %s -> %s%s\n", to_string(n.op).c_str(), n.name.c_str(), ins.c_str(), outs.c_str(), detail.c_str());
  }
}

constexpr const char* kInputHelp = ".npy in the input's layout; a model with several inputs: NAME=FILE.npy once per input "
                                   "(a GRU's initial state may be left out: zeros)";

}  // namespace

void register_model(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("model", "Import, quantize, run and evaluate whole models (ONNX)");
  cmd->require_subcommand(1);
  cmd->footer("Example (from the repository root: a small torch model as ONNX and an input, then its int8 model):\n"
              "  /usr/bin/python3 tools/example_model_onnx.py --out m.onnx --input x.npy\n"
              "  build/bin/fixq model info m.onnx\n"
              "  build/bin/fixq model quantize --model m.onnx --calib x.npy -o m.fixq\n"
              "  build/bin/fixq model run --model m.fixq --input x.npy -o out\n"
              "  build/bin/fixq model eval --model m.fixq --float m.onnx --input x.npy");

  auto q = std::make_shared<Options>();
  CLI::App* qc = cmd->add_subcommand("quantize", "Calibrate an ONNX model and write the integer model");
  qc->add_option("--model", q->model, "float model .onnx")->required()->check(CLI::ExistingFile);
  qc->add_option("--calib", q->inputs, std::string("calibration inputs: ") + kInputHelp)->required();
  qc->add_option("--config", q->config,
                 "int8, int16 (16-bit activations, 8-bit weights) or auto (8 or 16 bits per operator, the fewest 16 "
                 "that reach --target-cosine)")
      ->capture_default_str()
      ->check(CLI::IsMember({"int8", "int16", "auto"}));
  qc->add_option("--scales", q->scales, "pow2 (shifts only) or multiplier")->capture_default_str();
  CLI::Option* target = qc->add_option("--target-cosine", q->target_cosine,
                                       "--config auto: the least output cosine to reach on the calibration data, in (0, 1]")
                            ->capture_default_str();
  qc->add_option("--method", q->method,
                 "ranges: auto (chosen by the outputs' error on the calibration data, from min/max), or one of minmax, "
                 "ema, percentile, mse for every value as observed")
      ->capture_default_str();
  qc->add_option("--rounding", q->rounding, "Linear / Conv1d weights: gptq (against the calibration inputs) or nearest")
      ->capture_default_str();
  qc->add_flag("--no-bias-correction", q->no_bias_correction,
               "keep the Linear / Conv1d biases (by default the weight rounding's mean output error is taken off them)");
  qc->add_option("-o,--output", q->out, "quantized model (.fixq)")->required();
  qc->footer("Calibrates on the float model's run over the --calib inputs (GRUs run their own post-training\n"
             "quantization; Linear and Conv1d weights GPTQ with bias correction; every other range chosen by the\n"
             "outputs' error) and writes the integer model.\n"
             "Example (m.onnx and x.npy as made in `fixq model --help`):\n"
             "  build/bin/fixq model quantize --model m.onnx --calib x.npy --config int16 --scales multiplier -o m16.fixq\n"
             "  build/bin/fixq model quantize --model m.onnx --calib x=x.npy --config auto --target-cosine 0.9999 -o ma.fixq\n"
             "  build/bin/fixq model quantize --model m.onnx --calib x=x.npy -o m.fixq");
  qc->callback([q, target] {
    q->target_given = target->count() > 0;
    quantize_cmd(*q);
  });

  auto r = std::make_shared<Options>();
  CLI::App* rc = cmd->add_subcommand("run", "Run a float (.onnx) or quantized (.fixq) model");
  rc->add_option("--model", r->model, "float .onnx or quantized .fixq")->required()->check(CLI::ExistingFile);
  rc->add_option("--input", r->inputs, std::string(kInputHelp) + "; int8 / int16 arrays are taken as quantized")->required();
  rc->add_option("-o,--output", r->out, "directory: <output name>.npy per graph output, in its layout")->required();
  rc->add_flag("--frames", r->frames, "run frame by frame through the streaming step (the same bytes)");
  rc->add_flag("--raw", r->raw, "write a quantized model's integers instead of dequantized float32");
  rc->footer("Example (files as made in `fixq model --help`):\n"
             "  build/bin/fixq model run --model m.onnx --input x.npy -o out_float\n"
             "  build/bin/fixq model run --model m.fixq --input x.npy --frames -o out_int8\n"
             "  build/bin/fixq model run --model m.fixq --input x.npy --raw -o out_raw");
  rc->callback([r] { run_cmd(*r); });

  auto e = std::make_shared<Options>();
  CLI::App* ec = cmd->add_subcommand("eval", "Compare a quantized model with its float model, per output");
  ec->add_option("--model", e->model, "quantized .fixq")->required()->check(CLI::ExistingFile);
  ec->add_option("--float", e->float_model, "float .onnx")->required()->check(CLI::ExistingFile);
  ec->add_option("--input", e->inputs, kInputHelp)->required();
  ec->footer("Prints each output's cosine, SQNR and largest error of the quantized model against the float one.\n"
             "Example (files as made in `fixq model --help`):\n"
             "  build/bin/fixq model eval --model m.fixq --float m.onnx --input x.npy");
  ec->callback([e] { eval_cmd(*e); });

  auto i = std::make_shared<std::string>();
  CLI::App* ic = cmd->add_subcommand("info", "Operators, shapes and layouts (quantized: bits and scales)");
  ic->add_option("model", *i, ".onnx or .fixq")->required()->check(CLI::ExistingFile);
  ic->footer("Example (files as made in `fixq model --help`):\n"
             "  build/bin/fixq model info m.onnx\n"
             "  build/bin/fixq model info m.fixq");
  ic->callback([i] { info_cmd(*i); });
}

}  // namespace fixq::cli
