// The worked examples of docs/spec.md, checked against the library. The spec's numbers
// were computed independently (exact rational arithmetic, not fixq); this test reads them
// out of the markdown (```fixq-example blocks of `key = value` lines) so that the document
// and the code cannot drift apart. Every key of every block must be consumed by a check,
// so a misspelt key fails instead of being skipped.
#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fixq/arith.h"
#include "fixq/gemm.h"
#include "fixq/qgru.h"
#include "fixq/quant.h"
#include "gru/int/plan.h"

namespace fixq {
namespace {

// ---- parsing ----------------------------------------------------------------------------

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::vector<std::string> split_list(const std::string& v) {
  std::vector<std::string> out;
  std::stringstream ss(v);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(trim(item));
  return out;
}

int64_t to_i64(const std::string& s) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) throw std::runtime_error("not an int64: '" + s + "'");
  return v;
}

// Decimal or C99 hexadecimal literals, each rounded once to the target type.
double to_f64(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size()) throw std::runtime_error("not a number: '" + s + "'");
  return v;
}

float to_f32(const std::string& s) {
  char* end = nullptr;
  const float v = std::strtof(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size()) throw std::runtime_error("not a number: '" + s + "'");
  return v;
}

// One ```fixq-example block.
struct Example {
  int line = 0;  // of the opening fence, for messages
  std::map<std::string, std::string> kv;
  std::set<std::string> used;

  bool has(const std::string& k) const { return kv.count(k) != 0; }
  const std::string& get(const std::string& k) {
    const auto it = kv.find(k);
    if (it == kv.end()) throw std::runtime_error("missing key '" + k + "'");
    used.insert(k);
    return it->second;
  }
  int64_t i64(const std::string& k) { return to_i64(get(k)); }
  std::vector<int64_t> i64s(const std::string& k) {
    std::vector<int64_t> v;
    for (const std::string& s : split_list(get(k))) v.push_back(to_i64(s));
    return v;
  }
  std::vector<double> f64s(const std::string& k) {
    std::vector<double> v;
    for (const std::string& s : split_list(get(k))) v.push_back(to_f64(s));
    return v;
  }
  std::vector<float> f32s(const std::string& k) {
    std::vector<float> v;
    for (const std::string& s : split_list(get(k))) v.push_back(to_f32(s));
    return v;
  }
  // Keys no check looked at: typos, or numbers the test would silently ignore.
  std::string unused() const {
    std::string u;
    for (const auto& [k, v] : kv)
      if (!used.count(k)) u += (u.empty() ? "" : ", ") + k;
    return u;
  }
};

const std::string kSpecPath = std::string(FIXQ_SOURCE_DIR) + "/docs/spec.md";

struct Spec {
  std::vector<Example> examples;
  int fences = 0;  // opening ```fixq-example lines seen
};

Spec parse_spec() {
  std::ifstream in(kSpecPath);
  if (!in) throw std::runtime_error("cannot read " + kSpecPath);
  Spec spec;
  std::string line;
  int n = 0;
  Example* cur = nullptr;
  while (std::getline(in, line)) {
    ++n;
    const std::string t = trim(line);
    if (!cur) {
      if (t == "```fixq-example") {
        ++spec.fences;
        spec.examples.emplace_back();
        cur = &spec.examples.back();
        cur->line = n;
      }
      continue;
    }
    if (t == "```") {
      cur = nullptr;
      continue;
    }
    if (t.empty() || t[0] == '#') continue;
    const size_t eq = t.find('=');
    if (eq == std::string::npos) throw std::runtime_error("spec.md line " + std::to_string(n) + ": no '=' in '" + t + "'");
    const std::string key = trim(t.substr(0, eq)), value = trim(t.substr(eq + 1));
    if (key.empty() || value.empty()) throw std::runtime_error("spec.md line " + std::to_string(n) + ": empty key or value");
    if (!cur->kv.emplace(key, value).second)
      throw std::runtime_error("spec.md line " + std::to_string(n) + ": duplicate key '" + key + "'");
  }
  if (cur) throw std::runtime_error("spec.md: unterminated fixq-example block at line " + std::to_string(cur->line));
  return spec;
}

const Spec& spec() {
  static const Spec s = parse_spec();
  return s;
}

// Runs check on every example of one kind; returns how many there were.
template <class F>
int for_each_example(const std::string& kind, F&& check) {
  int count = 0;
  for (Example e : spec().examples) {
    if (!e.has("example") || e.kv.at("example") != kind) continue;
    ++count;
    e.used.insert("example");
    SCOPED_TRACE("docs/spec.md example at line " + std::to_string(e.line) + " (" + kind + ")");
    try {
      check(e);
    } catch (const std::exception& ex) {
      ADD_FAILURE() << ex.what();
    }
    EXPECT_EQ(e.unused(), "") << "keys no check uses";
  }
  EXPECT_GT(count, 0) << "docs/spec.md has no '" << kind << "' example";
  return count;
}

template <class T>
void expect_same_size(const std::vector<T>& a, size_t n, const char* what) {
  if (a.size() != n || n == 0)
    throw std::runtime_error(std::string(what) + " has " + std::to_string(a.size()) + " values, expected " +
                             std::to_string(n) + " (and at least one)");
}

// ---- the checks -----------------------------------------------------------------------

const std::set<std::string> kKinds = {"rounding_shift", "round_half_even", "scale_from_real", "scale_pow2",
                                      "params_from_range", "quantize", "lut", "gru_unit",
                                      "gru_unit_reset_before"};

TEST(spec, EveryExampleBlockParsesAndHasAKnownKind) {
  const Spec& s = spec();
  EXPECT_GE(s.fences, 20) << kSpecPath << " should hold the worked examples";
  EXPECT_EQ(static_cast<size_t>(s.fences), s.examples.size());
  std::set<std::string> seen;
  for (const Example& e : s.examples) {
    ASSERT_TRUE(e.has("example")) << "block at line " << e.line << " lacks 'example = <kind>'";
    EXPECT_TRUE(kKinds.count(e.kv.at("example"))) << "unknown kind '" << e.kv.at("example") << "' at line " << e.line;
    seen.insert(e.kv.at("example"));
  }
  EXPECT_EQ(seen, kKinds) << "every kind of example should appear";
}

TEST(spec, RoundingShiftRightHalfUp) {
  for_each_example("rounding_shift", [](Example& e) {
    const int n = static_cast<int>(e.i64("n"));
    const auto x = e.i64s("x"), y = e.i64s("y");
    expect_same_size(y, x.size(), "y");
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(rounding_shift_right_half_up(x[i], n), y[i]) << "x = " << x[i];
  });
}

TEST(spec, RoundHalfEven) {
  for_each_example("round_half_even", [](Example& e) {
    const auto x = e.f64s("x"), y = e.f64s("y");
    expect_same_size(y, x.size(), "y");
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(round_half_even(x[i]), y[i]) << "x = " << x[i];
  });
}

void check_apply(Example& e, const FixedPointScale& s) {
  const auto x = e.i64s("x"), y = e.i64s("apply");
  expect_same_size(y, x.size(), "apply");
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(s.apply(x[i]), y[i]) << "x = " << x[i];
}

TEST(spec, FixedPointScaleFromReal) {
  for_each_example("scale_from_real", [](Example& e) {
    const FixedPointScale s = FixedPointScale::from_real(to_f64(e.get("sigma")));
    EXPECT_EQ(s.m, e.i64("m"));
    EXPECT_EQ(s.shift, e.i64("shift"));
    check_apply(e, s);
  });
}

TEST(spec, FixedPointScalePow2) {
  for_each_example("scale_pow2", [](Example& e) {
    const int n = static_cast<int>(e.i64("n"));
    const FixedPointScale s = FixedPointScale::pow2(n);
    EXPECT_EQ(s, make_scale(std::ldexp(1.0, -n), ScaleKind::PowerOfTwo));
    check_apply(e, s);
  });
}

bool to_bool(const std::string& s) {
  if (s == "true") return true;
  if (s == "false") return false;
  throw std::runtime_error("not a bool: '" + s + "'");
}

TEST(spec, ParamsFromRange) {
  for_each_example("params_from_range", [](Example& e) {
    QuantScheme sc;
    sc.format = IntFormat::make(static_cast<int>(e.i64("bits")), true);
    sc.symmetry = to_bool(e.get("symmetric")) ? Symmetry::Symmetric : Symmetry::Asymmetric;
    sc.scale_kind = parse_scale_kind(e.get("scales"));
    const Range r{to_f32(e.get("min")), to_f32(e.get("max"))};
    const QuantParams p = params_from_ranges(sc, Shape{1}, std::span<const Range>(&r, 1));
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p.scale[0], to_f32(e.get("scale")));
    EXPECT_EQ(p.zero_point[0], e.i64("zero_point"));
    if (sc.scale_kind == ScaleKind::PowerOfTwo) {
      ASSERT_EQ(p.exponent.size(), 1u);
      EXPECT_EQ(p.exponent[0], e.i64("exponent"));
    }
  });
}

TEST(spec, QuantizeInput) {
  for_each_example("quantize", [](Example& e) {
    QuantParams p;
    p.scheme.format = IntFormat::make(static_cast<int>(e.i64("bits")), true);
    p.scale = {to_f32(e.get("scale"))};
    p.zero_point = {static_cast<int32_t>(e.i64("zero_point"))};
    const auto x = e.f32s("x");
    const auto q = e.i64s("q");
    expect_same_size(q, x.size(), "q");
    // The array path (the instruction set's kernel, as the GRU uses it) and the scalar one.
    std::vector<int32_t> out(x.size());
    quantize(x.data(), Shape{static_cast<int64_t>(x.size())}, p, out.data());
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_EQ(out[i], q[i]) << "x = " << x[i];
      EXPECT_EQ(quantize_value(x[i], p.scale[0], p.zero_point[0], p.scheme.format.range()), q[i]) << "x = " << x[i];
    }
  });
}

QuantParams per_tensor(int bits, float scale, int32_t zp) {
  QuantParams p;
  p.scheme.format = IntFormat::make(bits, true);
  p.scale = {scale};
  p.zero_point = {zp};
  return p;
}

ActivationLut::Fn to_fn(const std::string& s) {
  if (s == "sigmoid") return ActivationLut::Fn::Sigmoid;
  if (s == "tanh") return ActivationLut::Fn::Tanh;
  throw std::runtime_error("unknown activation '" + s + "'");
}

TEST(spec, ActivationTables) {
  for_each_example("lut", [](Example& e) {
    const QuantParams in = per_tensor(static_cast<int>(e.i64("in_bits")), to_f32(e.get("in_scale")),
                                      static_cast<int32_t>(e.i64("in_zero_point")));
    const QuantParams out = per_tensor(static_cast<int>(e.i64("out_bits")), to_f32(e.get("out_scale")),
                                       static_cast<int32_t>(e.i64("out_zero_point")));
    const ActivationLut lut = ActivationLut::build(to_fn(e.get("fn")), in, out);
    EXPECT_EQ(lut.shift(), e.i64("shift"));
    EXPECT_EQ(static_cast<int64_t>(lut.entries()), e.i64("entries"));
    const auto q = e.i64s("q"), y = e.i64s("y");
    expect_same_size(y, q.size(), "y");
    for (size_t i = 0; i < q.size(); ++i) EXPECT_EQ(lut(static_cast<int32_t>(q[i])), y[i]) << "q = " << q[i];
  });
}

// ---- one GRU unit update ----------------------------------------------------------------

const char* const kOpNames[kGruOpCount] = {"x", "h", "W", "R", "bx", "br", "Wx", "Rh", "z_pre",
                                           "r_pre", "g_pre", "z_out", "r_out", "g_out", "Rh_add_br",
                                           "rRh", "old_contrib", "new_contrib"};

GruCellParams cell_params(Example& e, const GruQuantConfig& cfg) {
  GruCellParams p;
  for (int i = 0; i < kGruOpCount; ++i) {
    const GruOp op = static_cast<GruOp>(i);
    EXPECT_EQ(to_string(op), kOpNames[i]);
    QuantParams& q = p[op];
    q.scheme = gru_op_scheme(op, cfg);
    const std::string name = kOpNames[i];
    q.scale = e.f32s(name + ".scale");
    for (int64_t z : e.i64s(name + ".zero_point")) q.zero_point.push_back(static_cast<int32_t>(z));
    if (q.scheme.granularity == Granularity::PerChannel) q.shape = Shape{static_cast<int64_t>(q.scale.size())};
    if (cfg.scale_kind == ScaleKind::PowerOfTwo)
      for (float s : q.scale) q.exponent.push_back(-std::ilogb(s));
    q.validate();  // the spec's parameters must be ones the library accepts
  }
  return p;
}

std::vector<int32_t> ints(Example& e, const std::string& key, size_t n) {
  std::vector<int32_t> v;
  for (int64_t x : e.i64s(key)) v.push_back(static_cast<int32_t>(x));
  expect_same_size(v, n, key.c_str());
  return v;
}

void expect_ratio(Example& e, const std::string& name, const FixedPointScale& s) {
  const auto v = e.i64s("ratio." + name);
  expect_same_size(v, 2, ("ratio." + name).c_str());
  EXPECT_EQ(s.m, v[0]) << "m of " << name;
  EXPECT_EQ(s.shift, v[1]) << "shift of " << name;
}

int32_t sat(int64_t v, const gru_detail::OpQ& q) { return static_cast<int32_t>(saturate(v, q.range.qmin, q.range.qmax)); }

// Stores v into a one-element buffer of the operator's storage type.
std::vector<char> buffer_of(const gru_detail::OpQ& q, int32_t v) {
  std::vector<char> b(2, 0);
  if (q.storage == IntType::S16) {
    const auto s = static_cast<int16_t>(v);
    std::memcpy(b.data(), &s, 2);
  } else {
    b[0] = static_cast<char>(static_cast<int8_t>(v));
  }
  return b;
}

int32_t value_of(const gru_detail::OpQ& q, const std::vector<char>& b) {
  if (q.storage == IntType::S16) {
    int16_t s;
    std::memcpy(&s, b.data(), 2);
    return s;
  }
  return static_cast<int8_t>(b[0]);
}

TEST(spec, GruUnitUpdate) {
  for_each_example("gru_unit", [](Example& e) {
    const ScaleKind kind = parse_scale_kind(e.get("scales"));
    const std::string base = e.get("config");
    if (base != "int8" && base != "int16") throw std::runtime_error("config must be int8 or int16");
    const GruQuantConfig cfg = base == "int8" ? GruQuantConfig::int8(kind) : GruQuantConfig::int16(kind);
    const GruCellParams params = cell_params(e, cfg);
    const gru_detail::CellPlan p = gru_detail::build_plan(params, cfg, 1, 1, ints(e, "q_W", 3), ints(e, "q_R", 3),
                                                          ints(e, "q_bx", 3), ints(e, "q_br", 3));
    const int32_t q_x = static_cast<int32_t>(e.i64("q_x")), q_h = static_cast<int32_t>(e.i64("q_h"));

    // Build-time constants (section 4).
    for (int j = 0; j < 3; ++j) {
      expect_ratio(e, "wx_scale." + std::to_string(j), p.wx_scale[static_cast<size_t>(j)]);
      expect_ratio(e, "rh_scale." + std::to_string(j), p.rh_scale[static_cast<size_t>(j)]);
    }
    expect_ratio(e, "wx_to_z", p.wx_to_z);
    expect_ratio(e, "rh_to_z", p.rh_to_z);
    expect_ratio(e, "wx_to_r", p.wx_to_r);
    expect_ratio(e, "rh_to_r", p.rh_to_r);
    expect_ratio(e, "rh_to_rhab", p.rh_to_rhab);
    expect_ratio(e, "wx_to_g", p.wx_to_g);
    expect_ratio(e, "rrh_to_g", p.rrh_to_g);
    expect_ratio(e, "rrh_mul", p.rrh_mul);
    expect_ratio(e, "old_mul", p.old_mul);
    expect_ratio(e, "new_mul", p.new_mul);
    expect_ratio(e, "old_to_h", p.old_to_h);
    expect_ratio(e, "new_to_h", p.new_to_h);
    EXPECT_EQ(p.bias_z[0], e.i64("bias_z"));
    EXPECT_EQ(p.bias_r[0], e.i64("bias_r"));
    EXPECT_EQ(p.bias_rhab[0], e.i64("bias_rhab"));
    EXPECT_EQ(p.bias_g[0], e.i64("bias_g"));
    EXPECT_EQ(p.q_one, e.i64("q_one"));
    const auto shifts = e.i64s("lut_shift");
    expect_same_size(shifts, 3, "lut_shift");
    EXPECT_EQ(p.sig_z.shift(), shifts[0]);
    EXPECT_EQ(p.sig_r.shift(), shifts[1]);
    EXPECT_EQ(p.tanh_g.shift(), shifts[2]);

    // The GEMMs (5.1), through the library's requantizing GEMM with the plan's weights.
    const std::vector<char> x_buf = buffer_of(p.x, q_x), h_buf = buffer_of(p.h, q_h);
    auto gemm = [](const gru_detail::OpQ& in, const std::vector<char>& a, const PackedB& w, const gru_detail::OpQ& out,
                   const std::vector<FixedPointScale>& scale) {
      RequantEpilogue ep;
      ep.azp = std::span<const int32_t>(&in.zp, 1);
      ep.scale = scale;
      ep.zp_out = out.zp;
      ep.out_type = out.storage;
      ep.out_min = out.range.qmin;
      ep.out_max = out.range.qmax;
      std::vector<char> y(6, 0);
      gemm_requant(MatrixView{in.storage, a.data(), 1, 1, 1}, w, ep, y.data(), 3);
      std::vector<int64_t> v;
      for (int j = 0; j < 3; ++j) {
        const std::vector<char> one(y.begin() + j * int_type_bytes(out.storage), y.end());
        v.push_back(value_of(out, one));
      }
      return v;
    };
    const auto wx = e.i64s("Wx"), rh = e.i64s("Rh");
    expect_same_size(wx, 3, "Wx");
    expect_same_size(rh, 3, "Rh");
    EXPECT_EQ(gemm(p.x, x_buf, p.w, p.wx, p.wx_scale), wx);
    EXPECT_EQ(gemm(p.h, h_buf, p.r, p.rh, p.rh_scale), rh);

    // Each intermediate of 5.2 from the spec's previous values, with the plan's constants.
    const int64_t z_pre = e.i64("z_pre"), z = e.i64("z"), r_pre = e.i64("r_pre"), r = e.i64("r");
    const int64_t rhab = e.i64("rhab"), rrh = e.i64("rrh"), g_pre = e.i64("g_pre"), g = e.i64("g");
    const int64_t old_c = e.i64("old_c"), omz = e.i64("one_minus_z"), new_c = e.i64("new_c"), h_new = e.i64("h_new");
    EXPECT_EQ(z_pre, sat(p.wx_to_z.apply(wx[0] - p.wx.zp) + p.rh_to_z.apply(rh[0] - p.rh.zp) + p.bias_z[0] + p.z_pre.zp, p.z_pre));
    EXPECT_EQ(r_pre, sat(p.wx_to_r.apply(wx[1] - p.wx.zp) + p.rh_to_r.apply(rh[1] - p.rh.zp) + p.bias_r[0] + p.r_pre.zp, p.r_pre));
    EXPECT_EQ(z, p.sig_z(static_cast<int32_t>(z_pre)));
    EXPECT_EQ(r, p.sig_r(static_cast<int32_t>(r_pre)));
    EXPECT_EQ(rhab, sat(p.rh_to_rhab.apply(rh[2] - p.rh.zp) + p.bias_rhab[0] + p.rh_add_br.zp, p.rh_add_br));
    EXPECT_EQ(rrh, sat(p.rrh_mul.apply((r - p.r_out.zp) * (rhab - p.rh_add_br.zp)) + p.rrh.zp, p.rrh));
    EXPECT_EQ(g_pre, sat(p.wx_to_g.apply(wx[2] - p.wx.zp) + p.rrh_to_g.apply(rrh - p.rrh.zp) + p.bias_g[0] + p.g_pre.zp, p.g_pre));
    EXPECT_EQ(g, p.tanh_g(static_cast<int32_t>(g_pre)));
    EXPECT_EQ(old_c, sat(p.old_mul.apply((z - p.z_out.zp) * (q_h - p.h.zp)) + p.old_c.zp, p.old_c));
    EXPECT_EQ(omz, p.q_one - z + p.z_out.zp);
    EXPECT_EQ(new_c, sat(p.new_mul.apply((omz - p.z_out.zp) * (g - p.g_out.zp)) + p.new_c.zp, p.new_c));
    EXPECT_EQ(h_new, sat(p.old_to_h.apply(old_c - p.old_c.zp) + p.new_to_h.apply(new_c - p.new_c.zp) + p.h.zp, p.h));

    // And the real time loop, one step with H = B = T = 1, must land on the spec's h_new:
    // the scalar reference the spec describes, and the dispatched loop (vectorised when
    // the CPU allows), which must equal it.
    for (const bool reference : {true, false}) {
      std::vector<char> state = h_buf, y = buffer_of(p.h, p.h.zp);
      if (reference) {
        gru_detail::run_cell_reference(p, x_buf.data(), 1, 1, {}, false, state.data(), y.data());
      } else {
        gru_detail::run_cell(p, x_buf.data(), 1, 1, {}, false, state.data(), y.data());
      }
      const char* which = reference ? "run_cell_reference" : "run_cell";
      EXPECT_EQ(value_of(p.h, state), h_new) << which << "'s new state";
      EXPECT_EQ(value_of(p.h, y), h_new) << which << "'s output";
    }
  });
}

// The reset-before step of docs/spec.md 5.4: its constants, each intermediate from the
// spec's previous values with the plan's constants, and the real loop landing on h_new.
TEST(spec, GruUnitResetBefore) {
  for_each_example("gru_unit_reset_before", [](Example& e) {
    const ScaleKind kind = parse_scale_kind(e.get("scales"));
    const std::string base = e.get("config");
    if (base != "int8" && base != "int16") throw std::runtime_error("config must be int8 or int16");
    const GruQuantConfig cfg = base == "int8" ? GruQuantConfig::int8(kind) : GruQuantConfig::int16(kind);
    const GruCellParams params = cell_params(e, cfg);
    const gru_detail::CellPlan p = gru_detail::build_plan(params, cfg, 1, 1, ints(e, "q_W", 3), ints(e, "q_R", 3),
                                                          ints(e, "q_bx", 3), ints(e, "q_br", 3), nullptr,
                                                          GruCellKind::ResetBefore);
    const int32_t q_x = static_cast<int32_t>(e.i64("q_x")), q_h = static_cast<int32_t>(e.i64("q_h"));
    expect_ratio(e, "wx_scale.2", p.wx_scale[2]);
    expect_ratio(e, "rh_scale.2", p.rh_scale[2]);
    expect_ratio(e, "wx_to_g", p.wx_to_g);
    expect_ratio(e, "reset_mul", p.reset_mul);
    expect_ratio(e, "rh_to_g", p.rh_to_g);
    EXPECT_EQ(p.bias_z[0], e.i64("bias_z"));
    EXPECT_EQ(p.bias_r[0], e.i64("bias_r"));
    EXPECT_EQ(p.bias_g[0], e.i64("bias_g"));

    const auto wx = e.i64s("Wx"), rh = e.i64s("Rh");
    expect_same_size(wx, 3, "Wx");
    expect_same_size(rh, 3, "Rh");
    const int64_t z_pre = e.i64("z_pre"), z = e.i64("z"), r_pre = e.i64("r_pre"), r = e.i64("r");
    const int64_t reset_h = e.i64("reset_h"), g_pre = e.i64("g_pre"), g = e.i64("g");
    const int64_t old_c = e.i64("old_c"), omz = e.i64("one_minus_z"), new_c = e.i64("new_c"), h_new = e.i64("h_new");
    // The products through the library's GEMM with the plan's packed parts of R.
    auto gemm = [](const gru_detail::OpQ& in, int32_t a, const PackedB& w, const gru_detail::OpQ& out,
                   std::span<const FixedPointScale> scale) {
      RequantEpilogue ep;
      ep.azp = std::span<const int32_t>(&in.zp, 1);
      ep.scale = scale;
      ep.zp_out = out.zp;
      ep.out_type = out.storage;
      ep.out_min = out.range.qmin;
      ep.out_max = out.range.qmax;
      const std::vector<char> a_buf = buffer_of(in, a);
      std::vector<char> y(6, 0);
      gemm_requant(MatrixView{in.storage, a_buf.data(), 1, 1, 1}, w, ep, y.data(), w.n());
      std::vector<int64_t> v;
      for (int64_t j = 0; j < w.n(); ++j) v.push_back(value_of(out, std::vector<char>(y.begin() + j * int_type_bytes(out.storage), y.end())));
      return v;
    };
    EXPECT_EQ(gemm(p.x, q_x, p.w, p.wx, p.wx_scale), wx);
    const std::span<const FixedPointScale> rs(p.rh_scale);
    EXPECT_EQ(gemm(p.h, q_h, p.r_zr, p.rh, rs.first(2)), std::vector<int64_t>(rh.begin(), rh.begin() + 2));
    EXPECT_EQ(gemm(p.h, static_cast<int32_t>(reset_h), p.r_g, p.rh, rs.subspan(2)), std::vector<int64_t>{rh[2]});
    EXPECT_EQ(z_pre, sat(p.wx_to_z.apply(wx[0] - p.wx.zp) + p.rh_to_z.apply(rh[0] - p.rh.zp) + p.bias_z[0] + p.z_pre.zp, p.z_pre));
    EXPECT_EQ(r_pre, sat(p.wx_to_r.apply(wx[1] - p.wx.zp) + p.rh_to_r.apply(rh[1] - p.rh.zp) + p.bias_r[0] + p.r_pre.zp, p.r_pre));
    EXPECT_EQ(z, p.sig_z(static_cast<int32_t>(z_pre)));
    EXPECT_EQ(r, p.sig_r(static_cast<int32_t>(r_pre)));
    EXPECT_EQ(reset_h, sat(p.reset_mul.apply((r - p.r_out.zp) * (q_h - p.h.zp)) + p.h.zp, p.h));
    EXPECT_EQ(g_pre, sat(p.wx_to_g.apply(wx[2] - p.wx.zp) + p.rh_to_g.apply(rh[2] - p.rh.zp) + p.bias_g[0] + p.g_pre.zp, p.g_pre));
    EXPECT_EQ(g, p.tanh_g(static_cast<int32_t>(g_pre)));
    EXPECT_EQ(old_c, sat(p.old_mul.apply((z - p.z_out.zp) * (q_h - p.h.zp)) + p.old_c.zp, p.old_c));
    EXPECT_EQ(omz, p.q_one - z + p.z_out.zp);
    EXPECT_EQ(new_c, sat(p.new_mul.apply((omz - p.z_out.zp) * (g - p.g_out.zp)) + p.new_c.zp, p.new_c));
    EXPECT_EQ(h_new, sat(p.old_to_h.apply(old_c - p.old_c.zp) + p.new_to_h.apply(new_c - p.new_c.zp) + p.h.zp, p.h));
    // The loops, one step with H = B = T = 1: the reference and the dispatched one.
    const std::vector<char> x_buf = buffer_of(p.x, q_x);
    for (const bool reference : {true, false}) {
      std::vector<char> state = buffer_of(p.h, q_h), y = buffer_of(p.h, p.h.zp);
      if (reference) {
        gru_detail::run_cell_reset_before_reference(p, x_buf.data(), 1, 1, {}, false, state.data(), y.data());
      } else {
        gru_detail::run_cell(p, x_buf.data(), 1, 1, {}, false, state.data(), y.data());
      }
      EXPECT_EQ(value_of(p.h, state), h_new) << (reference ? "reference" : "run_cell") << "'s new state";
      EXPECT_EQ(value_of(p.h, y), h_new) << (reference ? "reference" : "run_cell") << "'s output";
    }
  });
}

}  // namespace
}  // namespace fixq
