// `fixq bench model`: a whole model (an ONNX file fixq imports) in fixq float / int16 /
// int8, one frame per call (ModelStream, QuantizedModelStream::step) and T frames per call
// (model_forward, QuantizedModel::forward), against the peers found on this machine: torch
// float and torch dynamic int8 (bench/peers/torch_model.py, through Debian's python3) and
// onnxruntime float (bench/peers/ort_model.js, through node and onnxruntime-node). Each peer
// runs as a subprocess on the same ONNX file, first checked against fixq float's outputs
// on one input (max |difference| <= 1e-4), then timed; its rows are passed through. A peer
// that is absent or fails says so in a '#' line, and the run goes on.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compare/compare.h"
#include "compare/timing.h"
#include "fixq/error.h"
#include "fixq/gemm.h"
#include "fixq/model.h"
#include "fixq/npy.h"

namespace fixq::bench {

namespace {

constexpr int64_t kMaxBatch = 1024, kMaxFrames = 10000;
constexpr int64_t kCheckFrames = 20;  // the peers' check: batch 1, this many frames
constexpr double kCheckTolerance = 1e-4;

int64_t parse_count(const char* option, const std::string& text, int64_t max) {
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || v < 1 || v > max)
    fail(option, ": '", text, "' is not an integer in [1, ", max, "]");
  return v;
}

std::vector<int64_t> parse_list(const char* option, const std::string& text, int64_t max) {
  std::vector<int64_t> out;
  for (size_t begin = 0;;) {
    const size_t end = std::min(text.find(',', begin), text.size());
    out.push_back(parse_count(option, text.substr(begin, end - begin), max));
    if (end == text.size()) return out;
    begin = end + 1;
  }
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown CPU";
}

// A graph input's array in its own layout for batch B and T frames; State inputs empty (zeros).
ModelArray random_input(const ModelValue& v, int64_t B, int64_t T, std::mt19937& rng) {
  ModelArray a;
  if (v.kind == ValueKind::State) return a;
  for (char axis : v.layout.axes) a.shape.push_back(axis == 'B' ? B : axis == 'T' ? T : v.features);
  int64_t n = 1;
  for (int64_t d : a.shape) n *= d;
  std::normal_distribution<float> normal(0.0f, 1.0f);
  a.data.resize(static_cast<size_t>(n));
  for (float& x : a.data) x = normal(rng);
  return a;
}

std::vector<ModelArray> random_inputs(const Model& m, int64_t B, int64_t T, std::mt19937& rng) {
  std::vector<ModelArray> in;
  for (int i : m.inputs) in.push_back(random_input(m.values[static_cast<size_t>(i)], B, T, rng));
  return in;
}

// One frame [B, C] per Sequence input (frame t of each), empty for State inputs.
std::vector<std::vector<ModelArray>> frames_of(const Model& m, const std::vector<ModelArray>& in, int64_t B,
                                               int64_t T) {
  std::vector<std::vector<ModelArray>> frames(static_cast<size_t>(T));
  for (size_t k = 0; k < m.inputs.size(); ++k) {
    const ModelValue& v = m.values[static_cast<size_t>(m.inputs[k])];
    for (int64_t t = 0; t < T; ++t) {
      ModelArray f;
      if (v.kind == ValueKind::Sequence) {
        const int64_t C = v.features;
        f.shape = {B, C};
        f.data.resize(static_cast<size_t>(B * C));
        const std::string& ax = v.layout.axes;
        for (int64_t b = 0; b < B; ++b)
          for (int64_t c = 0; c < C; ++c) {
            int64_t idx = 0;  // row-major index of (b, t, c) in the layout
            for (char a : ax) {
              const int64_t d = a == 'B' ? B : a == 'T' ? T : C;
              idx = idx * d + (a == 'B' ? b : a == 'T' ? t : c);
            }
            f.data[static_cast<size_t>(b * C + c)] = in[k].data[static_cast<size_t>(idx)];
          }
      }
      frames[static_cast<size_t>(t)].push_back(std::move(f));
    }
  }
  return frames;
}

bool has_batch_axis(const Model& m) {
  for (int i : m.inputs)
    if (m.values[static_cast<size_t>(i)].kind == ValueKind::Sequence &&
        m.values[static_cast<size_t>(i)].layout.axes.find('B') == std::string::npos)
      return false;
  return true;
}

void write_npy(const std::string& path, const ModelArray& a) {
  NpyArray n;
  n.dtype = "<f4";
  n.shape = a.shape;
  n.data.resize(a.data.size() * sizeof(float));
  std::memcpy(n.data.data(), a.data.data(), n.data.size());
  save_npy(path, n);
}

// "name=AXES:features[:rows]" for every graph input: what the peers need to draw inputs.
std::string input_spec(const Model& m) {
  std::string s;
  for (int i : m.inputs) {
    const ModelValue& v = m.values[static_cast<size_t>(i)];
    if (!s.empty()) s += ",";
    s += v.name + "=" + v.layout.axes + ":" + std::to_string(v.features);
    if (v.kind == ValueKind::State) s += ":" + std::to_string(v.rows);
  }
  return s;
}

std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

bool is_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Runs a peer's command; passes its '#' lines and its rows (batch,frames,impl,us) through.
// A failure (exit != 0), or neither a row nor a '#' line, is a '#' line naming the peer and its last words.
void run_peer(const std::string& name, const std::string& command) {
  std::fflush(stdout);
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) {
    std::printf("# %s: absent (cannot start: %s)\n", name.c_str(), command.c_str());
    return;
  }
  std::string last;
  int rows = 0, comments = 0;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p) != nullptr) {
    std::string line(buf);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::printf("%s\n", line.c_str());
      ++comments;
    } else if (std::count(line.begin(), line.end(), ',') == 3 && line[0] >= '0' && line[0] <= '9') {
      std::printf("%s\n", line.c_str());
      ++rows;
    } else {
      last = line;
    }
    std::fflush(stdout);
  }
  const int rc = ::pclose(p);
  if (rc != 0 || (rows == 0 && comments == 0))
    std::printf("# %s: no rows (exit status %d%s%s)\n", name.c_str(), WIFEXITED(rc) ? WEXITSTATUS(rc) : -1,
                last.empty() ? "" : ": ", last.c_str());
}

// FIXQ_BENCH_PEERS, else share/fixq/peers beside this executable's bin/ (bench/compare/
// CMakeLists.txt: the build's links to bench/peers, an install's holds a copy); empty when
// the executable's folder cannot be read.
std::string peers_dir() {
  const char* e = std::getenv("FIXQ_BENCH_PEERS");
  if (e != nullptr && *e != '\0') return e;
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return "";
  std::string dir(exe, static_cast<size_t>(n));
  dir = dir.substr(0, dir.rfind('/'));  // bin/
  return dir.substr(0, dir.rfind('/')) + "/share/fixq/peers";
}

}  // namespace

void bench_model(const ModelBenchOptions& o) {
  if (o.model.empty()) fail("bench model: --model M.onnx is required");
  const std::vector<int64_t> batches = parse_list("--batch", o.batch.empty() ? "1,16" : o.batch, kMaxBatch);
  const std::vector<int64_t> frames = parse_list("--frames", o.frames.empty() ? "1,100" : o.frames, kMaxFrames);
  const int samples = static_cast<int>(parse_count("--samples", o.samples.empty() ? "5" : o.samples, 101));
  const double min_s = o.quick ? 0.01 : 0.1;
  // One thread: fixq's GEMMs would otherwise share large products over every hardware
  // thread (set_gemm_threads' default), as bench gru's use_threads(1) also sets.
  set_gemm_threads(1);
  const Model model = load_model_onnx(o.model);
  model.validate();
  const bool batched = has_batch_axis(model);
  bool bidirectional = false;
  for (const ModelNode& n : model.nodes)
    if (n.op == ModelOp::Gru && n.gru && n.gru->bidirectional) bidirectional = true;

  // Calibration: a deterministic draw, 4 batches of 2 x 64 frames of N(0, 1).
  std::mt19937 rng(2024);
  std::vector<std::vector<ModelArray>> calib;
  for (int i = 0; i < 4; ++i) calib.push_back(random_inputs(model, batched ? 2 : 1, 64, rng));
  ModelQuantConfig c8, c16;
  c8.preset = "int8";
  c16.preset = "int16";
  const QuantizedModel q8 = QuantizedModel::quantize(model, calib, c8);
  const QuantizedModel q16 = QuantizedModel::quantize(model, calib, c16);

  std::printf("# fixq bench model: %s; %s; 1 thread; int8 / int16 quantized here (pow2 scales, the default "
              "observer) on 4 batches of 2 x 64 frames of N(0,1), seed 2024; inputs N(0,1); us_per_frame = time "
              "per call / frames_per_call (all batch rows together); frames_per_call 1: the streaming step "
              "(ModelStream / QuantizedModelStream::step, state carried); median of %d samples, %s\n",
              o.model.c_str(), cpu_model().c_str(), samples, bench_clock_name());
  std::printf("batch,frames_per_call,impl,us_per_frame\n");
  std::fflush(stdout);

  for (int64_t B : batches) {
    if (!batched && B != 1) {
      std::printf("# batch %lld: skipped, the model's input has no batch axis\n", static_cast<long long>(B));
      continue;
    }
    for (int64_t F : frames) {
      // One input of max(F, 16) frames; a stream cycles through its frames.
      const int64_t T = std::max<int64_t>(F, 16);
      const std::vector<ModelArray> in = random_inputs(model, B, F == 1 ? T : F, rng);
      double us[3] = {};
      if (F == 1) {
        if (bidirectional) {
          std::printf("# batch %lld, 1 frame per call: skipped, a bidirectional GRU has no stream\n",
                      static_cast<long long>(B));
          continue;
        }
        const auto fr = frames_of(model, in, B, T);
        ModelStream fs(model, B);
        QuantizedModelStream s8(q8, B), s16(q16, B);
        int64_t t0 = 0, t1 = 0, t2 = 0;
        us[0] = 1e6 * median_seconds_per_call([&] { fs.step(fr[static_cast<size_t>(t0++ % T)]); }, samples, min_s);
        us[1] = 1e6 * median_seconds_per_call([&] { s16.step(fr[static_cast<size_t>(t1++ % T)]); }, samples, min_s);
        us[2] = 1e6 * median_seconds_per_call([&] { s8.step(fr[static_cast<size_t>(t2++ % T)]); }, samples, min_s);
      } else {
        const double f = static_cast<double>(F);
        us[0] = 1e6 * median_seconds_per_call([&] { model_forward(model, in); }, samples, min_s) / f;
        us[1] = 1e6 * median_seconds_per_call([&] { q16.forward(in); }, samples, min_s) / f;
        us[2] = 1e6 * median_seconds_per_call([&] { q8.forward(in); }, samples, min_s) / f;
      }
      const char* names[3] = {"fixq_float", "fixq_int16", "fixq_int8"};
      for (int i = 0; i < 3; ++i)
        std::printf("%lld,%lld,%s,%.3f\n", static_cast<long long>(B), static_cast<long long>(F), names[i], us[i]);
      std::fflush(stdout);
    }
  }

  // The peers: the check input (batch 1, kCheckFrames frames) and fixq float's outputs on it.
  if (o.no_peers) {
    std::printf("# peers: not run (--no-peers)\n");
    return;
  }
  char tmpl[] = "/tmp/fixq_bench_model_XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) fail("bench model: cannot make a temporary folder");
  const std::string dir = tmpl;
  const std::vector<ModelArray> check_in = random_inputs(model, 1, kCheckFrames, rng);
  const std::vector<ModelArray> check_out = model_forward(model, check_in);
  std::string check_files;
  for (size_t k = 0; k < model.inputs.size(); ++k) {
    if (check_in[k].data.empty()) continue;
    write_npy(dir + "/in." + std::to_string(k) + ".npy", check_in[k]);
  }
  for (size_t k = 0; k < model.outputs.size(); ++k) write_npy(dir + "/out." + std::to_string(k) + ".npy", check_out[k]);
  const std::string args = " --model " + shell_quote(o.model) + " --inputs " + shell_quote(input_spec(model)) +
                           " --check " + shell_quote(dir) + " --tolerance 1e-4 --batch " + join(batches) +
                           " --frames " + join(frames) + " --samples " + std::to_string(samples) +
                           (o.quick ? " --quick" : "");
  std::string state_outputs;  // graph outputs that are GRU states, which a stream carries
  for (size_t k = 0; k < model.outputs.size(); ++k)
    if (model.values[static_cast<size_t>(model.outputs[k])].kind == ValueKind::State)
      state_outputs += (state_outputs.empty() ? "" : ",") + std::to_string(k);
  const std::string ort_args = args + (state_outputs.empty() ? "" : " --state-outputs " + state_outputs);
  const std::string peers = peers_dir();
  const std::string torch_py = peers + "/torch_model.py", ort_js = peers + "/ort_model.js";
  if (peers.empty() || !is_file(torch_py))
    std::printf("# torch_float, torch_dynamic_int8: absent (no %s)\n", torch_py.c_str());
  else if (!is_file("/usr/bin/python3"))
    std::printf("# torch_float, torch_dynamic_int8: absent (no /usr/bin/python3)\n");
  else
    run_peer("torch", "/usr/bin/python3 " + shell_quote(torch_py) + args);
  if (peers.empty() || !is_file(ort_js))
    std::printf("# onnxruntime_float: absent (no %s)\n", ort_js.c_str());
  else if (std::system("command -v node >/dev/null 2>&1") != 0)
    std::printf("# onnxruntime_float: absent (no node on PATH)\n");
  else
    run_peer("onnxruntime", "node " + shell_quote(ort_js) + ort_args);
  std::system(("rm -rf " + shell_quote(dir)).c_str());
  (void)kCheckTolerance;
}

}  // namespace fixq::bench
