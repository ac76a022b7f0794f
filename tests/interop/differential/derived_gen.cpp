// Differential run for BP5 derived variables (docs/interop.md "Derived variables"): random
// inputs (float or double, 1-3 dimensions, 1-3 blocks, 1-3 steps, StatsLevel 0 or 1) and 1-4 derived
// variables of every DerivedVarType over them (add, subtract, magnitude, multiply, a+b, sqrt), written
// by an ADIOS2 built with -DADIOS2_USE_Derived_Variable=ON; bpls_cmp.sh (a default bpls) compares.
//   c++ -std=c++17 derived_gen.cpp -ladios2_cxx -ladios2_core -o derived_gen && ./derived_gen OUT.bp SEED
#include <adios2.h>
#include <random>
#include <string>
#include <vector>
int main(int argc, char **argv) {
  std::mt19937 R(atoi(argv[2])); auto rnd = [&](int a, int b) { return (int)(R() % (unsigned)(b - a + 1)) + a; };
  adios2::ADIOS adios; auto io = adios.DeclareIO("io"); io.SetEngine("BP5");
  if (rnd(0, 3) == 0) io.SetParameter("StatsLevel", "0");
  int nd = rnd(1, 3); std::vector<size_t> shape; for (int i = 0; i < nd; i++) shape.push_back(rnd(1, 5));
  size_t n = 1; for (auto s : shape) n *= s;
  int nin = rnd(2, 3); int nblk = rnd(1, (int)std::min<size_t>(3, shape[0]));
  bool f32 = rnd(0, 1);
  std::vector<adios2::Variable<double>> vd; std::vector<adios2::Variable<float>> vf;
  std::vector<std::string> names;
  for (int i = 0; i < nin; i++) { std::string nm = (rnd(0, 1) ? "in/" : "") + std::string("v") + std::to_string(i); names.push_back(nm);
    if (f32) vf.push_back(io.DefineVariable<float>(nm, shape, std::vector<size_t>(nd, 0), shape)); else vd.push_back(io.DefineVariable<double>(nm, shape, std::vector<size_t>(nd, 0), shape)); }
  const char *fn[] = {"add", "subtract", "magnitude", "multiply"};
  int nder = rnd(1, 4);
  for (int k = 0; k < nder; k++) {
    std::string ex = "a = " + names[0] + "\nb = " + names[1] + "\n";
    int f = rnd(0, 5);
    if (f < 4) ex += std::string(fn[f]) + "(a,b)"; else if (f == 4) ex += "a+b"; else ex += "sqrt(a)";
    auto t = (adios2::DerivedVarType)rnd(0, 2);
    io.DefineDerivedVariable((rnd(0, 1) ? "d/" : "") + std::string("der") + std::to_string(k), ex, t);
  }
  auto e = io.Open(argv[1], adios2::Mode::Write);
  int ns = rnd(1, 3);
  for (int s = 0; s < ns; s++) {
    e.BeginStep();
    for (int i = 0; i < nin; i++) {
      std::vector<double> a(n); std::vector<float> b(n); for (size_t j = 0; j < n; j++) { a[j] = (double)(R() % 1000) / 8.0; b[j] = (float)a[j]; }
      size_t r0 = 0, rowel = n / shape[0];
      for (int bk = 0; bk < nblk; bk++) {
        size_t rows = bk == nblk - 1 ? shape[0] - r0 : shape[0] / nblk;
        std::vector<size_t> st(nd, 0), ct = shape; st[0] = r0; ct[0] = rows;
        if (f32) { vf[i].SetSelection({st, ct}); e.Put(vf[i], b.data() + r0 * rowel, adios2::Mode::Sync); }
        else { vd[i].SetSelection({st, ct}); e.Put(vd[i], a.data() + r0 * rowel, adios2::Mode::Sync); }
        r0 += rows;
      }
    }
    e.EndStep();
  }
  e.Close();
}
