// Differential run for BP5 struct variables (docs/interop.md "Struct variables"): random struct
// layouts (1-5 members of every numeric type, arrays of 2-4, natural or packed offsets, tail
// padding), global and local arrays of 1-3 blocks over 1-3 steps, written by ADIOS2's C++ API;
// writes OUT.bp, OUT.truth (each step's records, variable by variable) and OUT.man (the variables).
// struct_check.c reads them back through libgpubp; bpls_cmp.sh compares the listings.
//   c++ -std=c++17 struct_gen.cpp -ladios2_cxx -ladios2_core -o struct_gen && ./struct_gen OUT.bp SEED
#include <adios2.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>
using adios2::DataType;
struct FT { DataType t; size_t sz; };
static const FT types[] = {{DataType::Int8,1},{DataType::Int16,2},{DataType::Int32,4},{DataType::Int64,8},
 {DataType::UInt8,1},{DataType::UInt16,2},{DataType::UInt32,4},{DataType::UInt64,8},{DataType::Float,4},
 {DataType::Double,8},{DataType::FloatComplex,8},{DataType::DoubleComplex,16}};
int main(int argc, char **argv) {
  std::mt19937 R(atoi(argv[2]));
  auto rnd = [&](int a, int b) { return (int)(R() % (unsigned)(b - a + 1)) + a; };
  adios2::ADIOS adios; auto io = adios.DeclareIO("io"); io.SetEngine("BP5");
  io.SetParameter("UseSelectiveMetadataAggregation", "false");
  if (rnd(0, 3) == 0) io.SetParameter("StatsLevel", "0");
  int nv = rnd(1, 3);
  struct V { adios2::VariableNT *v; size_t rec; int nd; std::vector<size_t> shape; int nblk; bool local; };
  std::vector<V> vars; std::string man;
  for (int i = 0; i < nv; i++) {
    int nf = rnd(1, 5); size_t off = 0; bool packed = rnd(0, 2) == 0;
    std::string sn = "S" + std::to_string(i);
    std::vector<std::tuple<std::string, FT, size_t, size_t>> fl;
    size_t maxal = 1;
    for (int k = 0; k < nf; k++) {
      FT t = types[rnd(0, 11)]; size_t cnt = rnd(0, 3) == 0 ? rnd(2, 4) : 1;
      size_t al = t.sz > 8 ? 8 : t.sz; if (t.t == DataType::FloatComplex) al = 4;
      if (!packed) off = (off + al - 1) / al * al;
      if (al > maxal) maxal = al;
      fl.emplace_back("f" + std::to_string(k), t, off, cnt); off += t.sz * cnt;
    }
    size_t rec = packed ? off : (off + maxal - 1) / maxal * maxal;
    if (rnd(0, 3) == 0) rec += rnd(1, 5);
    auto d = io.DefineStruct(sn, rec);
    for (auto &f : fl) d.AddField(std::get<0>(f), std::get<2>(f), std::get<1>(f).t, std::get<3>(f));
    V v; v.rec = rec; v.local = rnd(0, 3) == 0; v.nd = v.local ? 1 : rnd(1, 3);
    for (int k = 0; k < v.nd; k++) v.shape.push_back(rnd(1, 6));
    v.nblk = rnd(1, 3); if ((size_t)v.nblk > v.shape[0]) v.nblk = (int)v.shape[0];
    std::string name = (rnd(0, 2) == 0 ? "g/" : "") + std::string("sv") + std::to_string(i);
    adios2::Dims zero(v.nd, 0);
    if (v.local) v.v = new adios2::VariableNT(io.DefineStructVariable(name, d, {}, {}, v.shape));
    else v.v = new adios2::VariableNT(io.DefineStructVariable(name, d, v.shape, zero, v.shape));
    vars.push_back(v);
    size_t n = 1; for (auto x : v.shape) n *= x;
    man += name + " " + std::to_string(v.local) + " " + std::to_string(rec) + " " + std::to_string(n) + "\n";
  }
  auto vd = io.DefineVariable<double>("plain", {4}, {0}, {4});
  std::string base = argv[1];
  FILE *tf = fopen((base + ".truth").c_str(), "wb");
  auto e = io.Open(base, adios2::Mode::Write);
  int ns = rnd(1, 3);
  for (int s = 0; s < ns; s++) {
    e.BeginStep();
    for (auto &v : vars) {
      size_t n = 1; for (auto x : v.shape) n *= x;
      size_t rowel = n / v.shape[0];
      std::vector<unsigned char> buf(n * v.rec);
      for (auto &c : buf) c = (unsigned char)R();
      fwrite(buf.data(), 1, buf.size(), tf);
      size_t r0 = 0;
      for (int b = 0; b < v.nblk; b++) {
        size_t rows = b == v.nblk - 1 ? v.shape[0] - r0 : v.shape[0] / v.nblk;
        adios2::Dims st(v.nd, 0), ct = v.shape; st[0] = r0; ct[0] = rows;
        if (v.local) v.v->SetSelection({{}, ct}); else v.v->SetSelection({st, ct});
        e.Put(*v.v, buf.data() + r0 * rowel * v.rec, adios2::Mode::Sync);
        r0 += rows;
      }
    }
    double dd[4] = {1, 2, 3, (double)s}; e.Put(vd, dd, adios2::Mode::Sync);
    e.EndStep();
  }
  e.Close(); fclose(tf);
  FILE *mf = fopen((base + ".man").c_str(), "w"); fprintf(mf, "%d\n%s", ns, man.c_str()); fclose(mf);
  printf("%d vars %d steps\n", nv, ns);
}
