// Differential run for BP3 files (ADIOS2's legacy engine, io.SetEngine("BP3"): NAME.bp holds the
// index of every step, the data NAME.bp.dir/NAME.bp.0): random datasets of 1-6 steps and 1-8
// variables of every type (int8..uint64, float, double, long double, complex<float>, complex<double>,
// char arrays, strings as global and local values) and kind: global arrays of 1-3 dimensions in 1-4 blocks a step (tiling
// the shape along one dimension or random boxes that overlap or leave holes), shapes that change
// between steps, local arrays, global values, local values (LocalValueDim), variables absent from
// random steps, blosc on some arrays (zlib, lz4, zstd, blosclz; random shuffle and level),
// StatsLevel 0 or 1, attributes (scalars, arrays, strings, string arrays, variable attributes, some
// defined after the first step). Every value is a small deterministic number from std::mt19937(SEED);
// the datasets are a few KiB. Also writes OUT.sel: a random bpls selection "-s S -c C VAR" (one
// argument a line) on one global array, empty when there is none. bpls_cmp.sh compares the listings.
// An optional third argument names another engine (BP4, BP5) for the same content: a difference that
// BP4 shows too is not BP3's.
//   c++ -std=c++17 -I$A2/include bp3_gen.cpp -L$A2/lib -ladios2_cxx -ladios2_core -Wl,-rpath,$A2/lib -o bp3_gen
//   ./bp3_gen OUT.bp SEED && BPLS=$A2/bin/bpls ./bpls_cmp.sh OUT.bp      (A2: an ADIOS2 install, 2.12.1 here)
#include <adios2.h>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

static std::mt19937 R;
static int rnd(int a, int b) { return (int)(R() % (unsigned)(b - a + 1)) + a; }

template <class T> static T val() { return (T)rnd(-100, 100); }
template <> uint8_t val<uint8_t>() { return (uint8_t)rnd(0, 250); }
template <> uint16_t val<uint16_t>() { return (uint16_t)rnd(0, 60000); }
template <> uint32_t val<uint32_t>() { return (uint32_t)rnd(0, 100000); }
template <> uint64_t val<uint64_t>() { return (uint64_t)rnd(0, 100000); }
template <> int64_t val<int64_t>() { return (int64_t)rnd(-100000, 100000); }
template <> float val<float>() { return (float)rnd(-1000, 1000) / 16.0f; }
template <> double val<double>() { return (double)rnd(-1000, 1000) / 16.0; }
template <> long double val<long double>() { return (long double)rnd(-1000, 1000) / 16.0L; }
template <> char val<char>() { return (char)('a' + rnd(0, 25)); }
template <> std::complex<float> val<std::complex<float>>() { float r = val<float>(); return {r, val<float>()}; }
template <> std::complex<double> val<std::complex<double>>() { double r = val<double>(); return {r, val<double>()}; }
template <> std::string val<std::string>() {
  std::string s = "s" + std::to_string(rnd(0, 999)); int n = rnd(0, 12);
  for (int i = 0; i < n; i++) s += (char)('a' + rnd(0, 25));
  return s;
}

enum Kind { GA, LA, GV, LV };
// types 0..13 numeric/char (every kind); 14 string (global and local values only)
enum { I8, I16, I32, I64, U8, U16, U32, U64, F32, F64, C32, C64, CH, LD, STR };
struct Var {
  int kind, type; std::string name; int nd; adios2::Dims shape; int maxblk;
  bool tile, varshape, sparse, blosc;
  int steps = 0; adios2::Dims firstshape; // written
};

static adios2::Params bloscParams() {
  const char *codec[] = {"zlib", "lz4", "zstd", "blosclz"};
  const char *shuf[] = {"BLOSC_NOSHUFFLE", "BLOSC_SHUFFLE", "BLOSC_BITSHUFFLE"};
  adios2::Params p = {{"compressor", codec[rnd(0, 3)]}, {"clevel", std::to_string(rnd(1, 9))},
                      {"doshuffle", shuf[rnd(0, 2)]}};
  if (rnd(0, 2) == 0) p["threshold"] = std::to_string(rnd(0, 64));
  return p;
}

template <class T> static void define(adios2::IO &io, adios2::Operator &op, Var &v) {
  adios2::Variable<T> var;
  if (v.kind == GA) var = io.DefineVariable<T>(v.name, v.shape, adios2::Dims(v.nd, 0), v.shape);
  else if (v.kind == LA) var = io.DefineVariable<T>(v.name, {}, {}, v.shape);
  else if (v.kind == GV) var = io.DefineVariable<T>(v.name);
  else var = io.DefineVariable<T>(v.name, {adios2::LocalValueDim});
  if (v.blosc) var.AddOperation(op, bloscParams());
}

template <class T> static void put(adios2::IO &io, adios2::Engine &e, Var &v) {
  auto var = io.InquireVariable<T>(v.name);
  if (v.kind == GV) { e.Put(var, val<T>(), adios2::Mode::Sync); return; }
  int nb = rnd(1, v.maxblk);
  if (v.kind == LV) { for (int b = 0; b < nb; b++) e.Put(var, val<T>(), adios2::Mode::Sync); return; }
  if (v.kind == LA) {
    for (int b = 0; b < nb; b++) {
      adios2::Dims c(v.nd); size_t n = 1;
      for (auto &x : c) { x = rnd(1, 5); n *= x; }
      std::vector<T> d(n); for (auto &x : d) x = val<T>();
      var.SetSelection({{}, c}); e.Put(var, d.data(), adios2::Mode::Sync);
    }
    return;
  }
  if (v.varshape && v.steps > 0 && rnd(0, 1)) { for (auto &x : v.shape) x = rnd(1, 6); var.SetShape(v.shape); }
  if (v.steps == 0) v.firstshape = v.shape;
  std::vector<std::pair<adios2::Dims, adios2::Dims>> boxes;
  if (v.tile) {
    int d = rnd(0, v.nd - 1); if ((size_t)nb > v.shape[d]) nb = (int)v.shape[d];
    size_t r0 = 0;
    for (int b = 0; b < nb; b++) {
      size_t len = b == nb - 1 ? v.shape[d] - r0 : v.shape[d] / nb;
      adios2::Dims st(v.nd, 0), ct = v.shape; st[d] = r0; ct[d] = len; r0 += len;
      boxes.push_back({st, ct});
    }
  } else {
    for (int b = 0; b < nb; b++) {
      adios2::Dims st(v.nd), ct(v.nd);
      for (int k = 0; k < v.nd; k++) { st[k] = rnd(0, (int)v.shape[k] - 1); ct[k] = rnd(1, (int)(v.shape[k] - st[k])); }
      boxes.push_back({st, ct});
    }
  }
  for (auto &bx : boxes) {
    size_t n = 1; for (auto x : bx.second) n *= x;
    std::vector<T> d(n); for (auto &x : d) x = val<T>();
    var.SetSelection({bx.first, bx.second}); e.Put(var, d.data(), adios2::Mode::Sync);
  }
}

#define DISPATCH(F, t, ...)                                                                          \
  switch (t) {                                                                                       \
  case I8: F<int8_t>(__VA_ARGS__); break; case I16: F<int16_t>(__VA_ARGS__); break;                  \
  case I32: F<int32_t>(__VA_ARGS__); break; case I64: F<int64_t>(__VA_ARGS__); break;                \
  case U8: F<uint8_t>(__VA_ARGS__); break; case U16: F<uint16_t>(__VA_ARGS__); break;                \
  case U32: F<uint32_t>(__VA_ARGS__); break; case U64: F<uint64_t>(__VA_ARGS__); break;              \
  case F32: F<float>(__VA_ARGS__); break; case F64: F<double>(__VA_ARGS__); break;                   \
  case C32: F<std::complex<float>>(__VA_ARGS__); break;                                              \
  case C64: F<std::complex<double>>(__VA_ARGS__); break; case CH: F<char>(__VA_ARGS__); break;       \
  case LD: F<long double>(__VA_ARGS__); break; default: F<std::string>(__VA_ARGS__); break;          \
  }

template <class T> static void attr(adios2::IO &io, const std::string &name, int form, const std::string &var) {
  int n = form == 1 ? rnd(1, 5) : 1;
  std::vector<T> d(n); for (int i = 0; i < n; i++) d[i] = val<T>();
  if (form == 1) io.DefineAttribute<T>(name, d.data(), n, var);
  else io.DefineAttribute<T>(name, d[0], var);
}

static void attribute(adios2::IO &io, int k, const std::vector<Var> &vars) {
  std::string name = (rnd(0, 3) == 0 ? "ag/" : "") + std::string("att") + std::to_string(k);
  std::string var = !vars.empty() && rnd(0, 3) == 0 ? vars[rnd(0, (int)vars.size() - 1)].name : "";
  int t = rnd(0, 16); if (t > STR) t = STR;   // strings more often
  int form = rnd(0, 1);                      // 0 single value, 1 array
  DISPATCH(attr, t, io, name, form, var)
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: bp3_gen OUT.bp SEED [ENGINE]\n"); return 2; }
  R.seed(atoi(argv[2]));
  adios2::ADIOS adios; auto io = adios.DeclareIO("io"); io.SetEngine(argc > 3 ? argv[3] : "BP3");
  io.SetParameter("Profile", "Off");
  if (rnd(0, 2) == 0) io.SetParameter("StatsLevel", "0");
  auto op = adios.DefineOperator("blosc", "blosc");
  int nv = rnd(1, 8);
  std::vector<Var> vars;
  for (int i = 0; i < nv; i++) {
    Var v; v.kind = rnd(0, 3); v.type = rnd(0, 13);
    if ((v.kind == GV || v.kind == LV) && rnd(0, 3) == 0) v.type = STR;
    v.name = (rnd(0, 3) == 0 ? "g/" : "") + std::string("v") + std::to_string(i);
    v.nd = v.kind == GA ? rnd(1, 3) : v.kind == LA ? rnd(1, 2) : 0;
    for (int k = 0; k < v.nd; k++) v.shape.push_back(rnd(1, 6));
    v.maxblk = v.kind == GA ? rnd(1, 4) : v.kind == GV ? 1 : rnd(1, 3);
    v.tile = rnd(0, 2) != 0; v.varshape = v.kind == GA && rnd(0, 3) == 0; v.sparse = rnd(0, 2) == 0;
    v.blosc = (v.kind == GA || v.kind == LA) && rnd(0, 3) == 0;
    DISPATCH(define, v.type, io, op, v)
    vars.push_back(v);
  }
  int na = rnd(0, 6), nlate = 0;
  for (int k = 0; k < na; k++) attribute(io, k, vars);
  auto e = io.Open(argv[1], adios2::Mode::Write);
  int ns = rnd(1, 6);
  for (int s = 0; s < ns; s++) {
    e.BeginStep();
    if (s > 0 && rnd(0, 5) == 0) attribute(io, na + nlate++, vars);
    for (auto &v : vars) {
      if (v.sparse && rnd(0, 2) == 0) continue;
      DISPATCH(put, v.type, io, e, v)
      v.steps++;
    }
    e.EndStep();
  }
  e.Close();
  // a random selection on one global array written at least once
  std::vector<Var *> ga;
  for (auto &v : vars) if (v.kind == GA && v.steps > 0) ga.push_back(&v);
  FILE *f = fopen((std::string(argv[1]) + ".sel").c_str(), "w");
  if (!ga.empty()) {
    Var &v = *ga[rnd(0, (int)ga.size() - 1)];
    adios2::Dims dims = v.firstshape;
    if (v.steps > 1) dims.insert(dims.begin(), (size_t)v.steps);
    int nsel = (int)dims.size(); if (nsel > 1 && rnd(0, 4) == 0) nsel--;
    std::string ss, cs;
    for (int k = 0; k < nsel; k++) {
      int st = rnd(0, (int)dims[k] - 1), ct = rnd(1, (int)dims[k] - st);
      if (rnd(0, 5) == 0) ct = -1;
      if (rnd(0, 7) == 0) st = -1, ct = 1;
      ss += (k ? "," : "") + std::to_string(st); cs += (k ? "," : "") + std::to_string(ct);
    }
    fprintf(f, "-s\n%s\n-c\n%s\n%s\n", ss.c_str(), cs.c_str(), v.name.c_str());
  }
  fclose(f);
  printf("%d vars %d steps %d attributes\n", nv, ns, na + nlate);
}
