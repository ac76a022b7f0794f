/*
 * mpigen.c - random multi-rank ADIOS2 BP4/BP5 file generator (oracle use only)
 *
 *   mpirun --oversubscribe -np N ./mpigen OUT.bp SEED
 *
 * Every rank derives the same random plan from SEED (and N = comm size),
 * then writes its own rank-dependent data. Rank 0 prints the engine name
 * ("BP4" or "BP5") on stdout. Set MPIGEN_VERBOSE=1 for a plan dump on stderr;
 * MPIGEN_PLANONLY=1 dumps the plan (stderr) and exits without writing anything.
 */
#include <mpi.h>
#include <adios2_c.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The C API has no constant for the joined dimension (only
 * adios2_local_value_dim = SIZE_MAX - 2). C++ adios2::JoinedDim = MaxU64 - 1. */
#ifndef MPIGEN_JOINED_DIM
#define MPIGEN_JOINED_DIM ((size_t)(SIZE_MAX - 1))
#endif

#define MAXR 16
#define MAXS 4
#define MAXB 2
#define MAXV 6

static int g_rank = 0, g_size = 1;
static int g_verbose = 0;

static void die(const char *what, int line)
{
    fprintf(stderr, "mpigen rank %d: FAILED %s (line %d)\n", g_rank, what, line);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}
#define CHK(call)                                                                                  \
    do                                                                                             \
    {                                                                                              \
        if ((call) != adios2_error_none)                                                           \
            die(#call, __LINE__);                                                                  \
    } while (0)
#define CHKP(p, what)                                                                              \
    do                                                                                             \
    {                                                                                              \
        if ((p) == NULL)                                                                           \
            die(what, __LINE__);                                                                   \
    } while (0)

/* ---------------- RNG (splitmix64) ---------------- */
typedef struct
{
    uint64_t s;
} rng_t;
static uint64_t rnext(rng_t *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static int rint_(rng_t *r, int lo, int hi) { return lo + (int)(rnext(r) % (uint64_t)(hi - lo + 1)); }
static int chance(rng_t *r, int pct) { return rint_(r, 0, 99) < pct; }

/* ---------------- types ---------------- */
typedef struct
{
    adios2_type t;
    size_t sz;
    const char *name;
    int cls; /* 0 signed int, 1 unsigned int, 2 float, 3 complex */
} tinfo_t;
static const tinfo_t TYPES[] = {
    {adios2_type_int8_t, 1, "int8", 0},
    {adios2_type_int16_t, 2, "int16", 0},
    {adios2_type_int32_t, 4, "int32", 0},
    {adios2_type_int64_t, 8, "int64", 0},
    {adios2_type_uint8_t, 1, "uint8", 1},
    {adios2_type_uint16_t, 2, "uint16", 1},
    {adios2_type_uint32_t, 4, "uint32", 1},
    {adios2_type_uint64_t, 8, "uint64", 1},
    {adios2_type_float, 4, "float", 2},
    {adios2_type_double, 8, "double", 2},
    {adios2_type_float_complex, 8, "float complex", 3},
    {adios2_type_double_complex, 16, "double complex", 3},
};
#define NTYPES ((int)(sizeof(TYPES) / sizeof(TYPES[0])))

/* fill n elements of type ti into buf with values from rng r */
static void fill(void *buf, int ti, size_t n, rng_t *r, int big)
{
    const tinfo_t *T = &TYPES[ti];
    size_t i;
    for (i = 0; i < n; ++i)
    {
        char *p = (char *)buf + i * T->sz;
        int64_t v = rint_(r, -1000, 1000);
        switch (T->t)
        {
        case adios2_type_int8_t: {
            int8_t x = (int8_t)rint_(r, -128, 127);
            memcpy(p, &x, 1);
            break;
        }
        case adios2_type_int16_t: {
            int16_t x = (int16_t)rint_(r, -32768, 32767);
            memcpy(p, &x, 2);
            break;
        }
        case adios2_type_int32_t: {
            int32_t x = (int32_t)(v * (big ? 1 : 1000003));
            memcpy(p, &x, 4);
            break;
        }
        case adios2_type_int64_t: {
            int64_t x = v * (chance(r, 50) ? 1 : 1000000007LL);
            memcpy(p, &x, 8);
            break;
        }
        case adios2_type_uint8_t: {
            uint8_t x = (uint8_t)rint_(r, 0, 255);
            memcpy(p, &x, 1);
            break;
        }
        case adios2_type_uint16_t: {
            uint16_t x = (uint16_t)rint_(r, 0, 65535);
            memcpy(p, &x, 2);
            break;
        }
        case adios2_type_uint32_t: {
            uint32_t x = (uint32_t)(rnext(r) >> (big ? 48 : 32));
            memcpy(p, &x, 4);
            break;
        }
        case adios2_type_uint64_t: {
            uint64_t x = chance(r, 50) ? (uint64_t)rint_(r, 0, 1000) : rnext(r);
            memcpy(p, &x, 8);
            break;
        }
        case adios2_type_float: {
            float x = (float)v / 8.0f;
            memcpy(p, &x, 4);
            break;
        }
        case adios2_type_double: {
            double x = (double)v / 16.0;
            memcpy(p, &x, 8);
            break;
        }
        case adios2_type_float_complex: {
            float x[2] = {(float)v / 4.0f, (float)rint_(r, -1000, 1000) / 4.0f};
            memcpy(p, x, 8);
            break;
        }
        case adios2_type_double_complex: {
            double x[2] = {(double)v / 32.0, (double)rint_(r, -1000, 1000) / 32.0};
            memcpy(p, x, 16);
            break;
        }
        default:
            break;
        }
    }
}

/* ---------------- plan ---------------- */
enum
{
    K_GA = 0, /* global array */
    K_LA,     /* local array */
    K_LV,     /* local value */
    K_GV,     /* global value (rank 0) */
    K_JA      /* joined array (BP5 only) */
};
static const char *KNAME[] = {"GlobalArray", "LocalArray", "LocalValue", "GlobalValue",
                              "JoinedArray"};

typedef struct
{
    int kind, ti, ndim, big, deferred;
    char name[64];
    int blosc;
    const char *comp, *shuf;
    int clevel;
    int present[MAXS];
    /* GA */
    int varshape, splitdim, nbase[MAXR];
    size_t other;
    size_t shape[MAXS][2];
    size_t start[MAXR][MAXS][MAXB][2];
    /* common per-block */
    int nblk[MAXR][MAXS];
    size_t cnt[MAXR][MAXS][MAXB][2];
    adios2_variable *v;
} var_t;

typedef struct
{
    int bp5;
    int naggr, nsub;
    const char *aggtype;
    int nsteps, nvars;
    var_t vars[MAXV];
} plan_t;

static const char *COMPS[] = {"blosclz", "lz4", "lz4hc", "zlib", "zstd"};
static const char *SHUFS[] = {"BLOSC_NOSHUFFLE", "BLOSC_SHUFFLE", "BLOSC_BITSHUFFLE"};
static const char *AGGT[] = {"EveryoneWrites", "EveryoneWritesSerial", "TwoLevelShm"};

static size_t rlen(rng_t *r, int big) { return big ? (size_t)rint_(r, 20, 150) : (size_t)rint_(r, 1, 6); }

static void make_plan(plan_t *P, uint64_t seed, int N)
{
    rng_t r = {seed * 0x2545F4914F6CDD1DULL + 12345};
    int i, s, k, b;
    memset(P, 0, sizeof(*P));
    P->bp5 = chance(&r, 50);
    P->naggr = chance(&r, 50) ? rint_(&r, 1, N) : 0;
    if (P->bp5)
    {
        P->aggtype = chance(&r, 60) ? AGGT[rint_(&r, 0, 2)] : NULL;
        P->nsub = chance(&r, 30) ? rint_(&r, 1, P->naggr ? P->naggr : N) : 0;
    }
    P->nsteps = rint_(&r, 1, 4);
    P->nvars = rint_(&r, 2, 6);
    for (i = 0; i < P->nvars; ++i)
    {
        var_t *V = &P->vars[i];
        int kind = rint_(&r, 0, P->bp5 ? 4 : 3);
        V->kind = kind;
        V->ti = rint_(&r, 0, NTYPES - 1);
        V->deferred = chance(&r, 50);
        V->big = (kind == K_GA || kind == K_LA || kind == K_JA) && chance(&r, 25);
        snprintf(V->name, sizeof(V->name), "%s%s%d_%s", chance(&r, 20) ? "grp/" : "",
                 kind == K_GA   ? "ga"
                 : kind == K_LA ? "la"
                 : kind == K_LV ? "lv"
                 : kind == K_GV ? "gv"
                                : "ja",
                 i, TYPES[V->ti].name[0] == 'd' && TYPES[V->ti].cls == 3 ? "dcplx"
                    : TYPES[V->ti].cls == 3                             ? "fcplx"
                                                                        : TYPES[V->ti].name);
        for (s = 0; s < MAXS; ++s)
            V->present[s] = 1;
#ifdef ADIOS2_HAVE_BLOSC2
        if ((kind == K_GA || kind == K_LA || kind == K_JA) && chance(&r, 40))
        {
            V->blosc = 1;
            V->comp = COMPS[rint_(&r, 0, 4)];
            V->shuf = chance(&r, 30) ? NULL : SHUFS[rint_(&r, 0, 2)];
            V->clevel = chance(&r, 50) ? rint_(&r, 1, 9) : -1;
            if (chance(&r, 50))
                V->big = 1;
        }
#endif
        switch (kind)
        {
        case K_GA:
            V->ndim = rint_(&r, 1, 2);
            V->splitdim = V->ndim == 2 ? rint_(&r, 0, 1) : 0;
            V->other = (size_t)rint_(&r, 1, 5);
            V->varshape = chance(&r, 50);
            for (k = 0; k < N; ++k)
                V->nbase[k] = rint_(&r, 1, 2);
            {
                size_t fixedlen[MAXR][MAXB];
                for (k = 0; k < N; ++k)
                    for (b = 0; b < MAXB; ++b)
                        fixedlen[k][b] = rlen(&r, V->big);
                for (s = 0; s < P->nsteps; ++s)
                {
                    /* blocks: (rank, blk) pairs, shuffled positions */
                    int pr[MAXR * MAXB], pb[MAXR * MAXB], np = 0, j;
                    size_t off = 0;
                    for (k = 0; k < N; ++k)
                    {
                        int skip = V->varshape && chance(&r, 20);
                        V->nblk[k][s] = skip ? 0 : V->nbase[k];
                        for (b = 0; b < V->nblk[k][s]; ++b)
                        {
                            V->cnt[k][s][b][V->splitdim] =
                                V->varshape ? rlen(&r, V->big) : fixedlen[k][b];
                            if (V->ndim == 2)
                                V->cnt[k][s][b][1 - V->splitdim] = V->other;
                            pr[np] = k;
                            pb[np] = b;
                            ++np;
                        }
                    }
                    if (V->varshape)
                        for (j = np - 1; j > 0; --j)
                        {
                            int x = rint_(&r, 0, j), t;
                            t = pr[j], pr[j] = pr[x], pr[x] = t;
                            t = pb[j], pb[j] = pb[x], pb[x] = t;
                        }
                    for (j = 0; j < np; ++j)
                    {
                        V->start[pr[j]][s][pb[j]][V->splitdim] = off;
                        if (V->ndim == 2)
                            V->start[pr[j]][s][pb[j]][1 - V->splitdim] = 0;
                        off += V->cnt[pr[j]][s][pb[j]][V->splitdim];
                    }
                    V->shape[s][V->splitdim] = off;
                    if (V->ndim == 2)
                        V->shape[s][1 - V->splitdim] = V->other;
                }
            }
            break;
        case K_LA:
            V->ndim = rint_(&r, 1, 2);
            for (s = 0; s < P->nsteps; ++s)
                for (k = 0; k < N; ++k)
                {
                    V->nblk[k][s] = chance(&r, 15) ? 0 : rint_(&r, 1, 2);
                    for (b = 0; b < V->nblk[k][s]; ++b)
                    {
                        V->cnt[k][s][b][0] = rlen(&r, V->big);
                        if (V->ndim == 2)
                            V->cnt[k][s][b][1] = (size_t)rint_(&r, 1, 4);
                        if (b > 0 && chance(&r, 30))
                            V->cnt[k][s][b][0] = 0; /* empty, not first */
                    }
                }
            break;
        case K_LV:
            V->ndim = 1;
            for (s = 0; s < P->nsteps; ++s)
                for (k = 0; k < N; ++k)
                    V->nblk[k][s] = rint_(&r, 1, 2);
            break;
        case K_GV:
            V->ndim = 0;
            for (s = 1; s < P->nsteps; ++s)
                V->present[s] = chance(&r, 80);
            for (s = 0; s < P->nsteps; ++s)
                V->nblk[0][s] = V->present[s];
            break;
        case K_JA:
            V->ndim = chance(&r, 25) ? 1 : 2;
            V->other = (size_t)rint_(&r, 1, 4);
            for (s = 0; s < P->nsteps; ++s)
                V->present[s] = chance(&r, 75);
            if (P->nsteps > 1 && chance(&r, 30))
                V->present[P->nsteps - 1] = 0;
            for (s = 0; s < P->nsteps; ++s)
                for (k = 0; k < N; ++k)
                {
                    V->nblk[k][s] = V->present[s] ? rint_(&r, 0, 2) : 0;
                    for (b = 0; b < V->nblk[k][s]; ++b)
                    {
                        V->cnt[k][s][b][0] = V->big ? (size_t)rint_(&r, 20, 100)
                                                    : (size_t)rint_(&r, 1, 5);
                        V->cnt[k][s][b][1] = V->other;
                    }
                }
            break;
        }
    }
}

static void dump_plan(const plan_t *P, int N)
{
    int i, s, k, b;
    fprintf(stderr, "engine=%s naggr=%d nsub=%d aggtype=%s steps=%d vars=%d N=%d\n",
            P->bp5 ? "BP5" : "BP4", P->naggr, P->nsub, P->aggtype ? P->aggtype : "-", P->nsteps,
            P->nvars, N);
    for (i = 0; i < P->nvars; ++i)
    {
        const var_t *V = &P->vars[i];
        fprintf(stderr, " var %s kind=%s type=%s ndim=%d blosc=%s/%s/%d deferred=%d\n", V->name,
                KNAME[V->kind], TYPES[V->ti].name, V->ndim, V->blosc ? V->comp : "-",
                V->shuf ? V->shuf : "-", V->clevel, V->deferred);
        for (s = 0; s < P->nsteps; ++s)
        {
            fprintf(stderr, "  step %d:", s);
            if (V->kind == K_GA)
                fprintf(stderr, " shape={%zu,%zu}", V->shape[s][0],
                        V->ndim == 2 ? V->shape[s][1] : 0);
            for (k = 0; k < N; ++k)
            {
                fprintf(stderr, " r%d[", k);
                for (b = 0; b < V->nblk[k][s]; ++b)
                    fprintf(stderr, "%s(%zu,%zu)/(%zu,%zu)", b ? " " : "", V->start[k][s][b][0],
                            V->start[k][s][b][1], V->cnt[k][s][b][0], V->cnt[k][s][b][1]);
                fprintf(stderr, "]");
            }
            fprintf(stderr, "\n");
        }
    }
}

/* ---------------- main ---------------- */
#define MAXBUF 64
static void *bufs[MAXBUF];
static int nbufs = 0;
static void *keep(size_t bytes)
{
    void *p = calloc(bytes ? bytes : 1, 1);
    if (!p || nbufs >= MAXBUF)
        die("alloc", __LINE__);
    bufs[nbufs++] = p;
    return p;
}
static void release(void)
{
    while (nbufs > 0)
        free(bufs[--nbufs]);
}

int main(int argc, char **argv)
{
    plan_t *P;
    adios2_adios *adios;
    adios2_io *io;
    adios2_engine *eng;
    adios2_operator *op = NULL;
    uint64_t seed;
    int i, s, b, N;
    char tmp[64];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    N = g_size;
    g_verbose = getenv("MPIGEN_VERBOSE") != NULL;
    if (argc < 3)
    {
        if (g_rank == 0)
            fprintf(stderr, "usage: mpirun -np N %s OUT.bp SEED\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    if (N > MAXR)
        die("too many ranks", __LINE__);
    seed = strtoull(argv[2], NULL, 10);

    P = (plan_t *)calloc(1, sizeof(plan_t));
    make_plan(P, seed, N);
    if ((g_verbose || getenv("MPIGEN_PLANONLY")) && g_rank == 0)
        dump_plan(P, N);
    if (getenv("MPIGEN_PLANONLY"))
    {
        free(P);
        MPI_Finalize();
        return 0;
    }

    adios = adios2_init_mpi(MPI_COMM_WORLD);
    CHKP(adios, "adios2_init_mpi");
    io = adios2_declare_io(adios, "mpigen");
    CHKP(io, "adios2_declare_io");
    CHK(adios2_set_engine(io, P->bp5 ? "BP5" : "BP4"));
    if (P->naggr)
    {
        snprintf(tmp, sizeof(tmp), "%d", P->naggr);
        CHK(adios2_set_parameter(io, "NumAggregators", tmp));
    }
    if (P->aggtype)
        CHK(adios2_set_parameter(io, "AggregationType", P->aggtype));
    if (P->nsub)
    {
        snprintf(tmp, sizeof(tmp), "%d", P->nsub);
        CHK(adios2_set_parameter(io, "NumSubFiles", tmp));
    }

#ifdef ADIOS2_HAVE_BLOSC2
    for (i = 0; i < P->nvars; ++i)
        if (P->vars[i].blosc)
        {
            op = adios2_define_operator(adios, "bloscop", "blosc");
            CHKP(op, "adios2_define_operator blosc");
            break;
        }
#endif

    /* define variables */
    for (i = 0; i < P->nvars; ++i)
    {
        var_t *V = &P->vars[i];
        adios2_type t = TYPES[V->ti].t;
        size_t sh[2] = {0, 0}, st[2] = {0, 0}, ct[2] = {0, 0};
        switch (V->kind)
        {
        case K_GA:
            sh[0] = V->shape[0][0];
            sh[1] = V->shape[0][1];
            V->v = adios2_define_variable(io, V->name, t, V->ndim, sh, st, ct,
                                          adios2_constant_dims_false);
            break;
        case K_LA:
            ct[0] = 1;
            ct[1] = 1;
            V->v = adios2_define_variable(io, V->name, t, V->ndim, NULL, NULL, ct,
                                          adios2_constant_dims_false);
            break;
        case K_LV:
            sh[0] = adios2_local_value_dim;
            V->v = adios2_define_variable(io, V->name, t, 1, sh, NULL, NULL,
                                          adios2_constant_dims_true);
            break;
        case K_GV:
            V->v = adios2_define_variable(io, V->name, t, 0, NULL, NULL, NULL,
                                          adios2_constant_dims_true);
            break;
        case K_JA:
            sh[0] = MPIGEN_JOINED_DIM;
            sh[1] = V->other;
            ct[0] = 1;
            ct[1] = V->other;
            V->v = adios2_define_variable(io, V->name, t, V->ndim, sh, NULL, ct,
                                          adios2_constant_dims_false);
            break;
        }
        CHKP(V->v, "adios2_define_variable");
        if (V->blosc && op)
        {
            size_t oi;
            CHK(adios2_add_operation(&oi, V->v, op, "compressor", V->comp));
            if (V->shuf)
                CHK(adios2_set_operation_parameter(V->v, oi, "doshuffle", V->shuf));
            if (V->clevel > 0)
            {
                snprintf(tmp, sizeof(tmp), "%d", V->clevel);
                CHK(adios2_set_operation_parameter(V->v, oi, "clevel", tmp));
            }
        }
    }

    /* attributes (same plan on every rank) */
    {
        rng_t ar = {seed ^ 0xA77A77A77ULL};
        int na = rint_(&ar, 1, 4), a;
        for (a = 0; a < na; ++a)
        {
            int kind = rint_(&ar, 0, 4);
            char aname[64];
            snprintf(aname, sizeof(aname), "attr%d", a);
            if (kind == 0 || kind == 1)
            {
                int ti = rint_(&ar, 0, 9); /* non-complex numeric */
                size_t n = kind == 0 ? 1 : (size_t)rint_(&ar, 2, 5);
                char buf[16 * 5];
                fill(buf, ti, n, &ar, 0);
                if (kind == 0)
                    CHKP(adios2_define_attribute(io, aname, TYPES[ti].t, buf),
                         "adios2_define_attribute");
                else
                    CHKP(adios2_define_attribute_array(io, aname, TYPES[ti].t, buf, n),
                         "adios2_define_attribute_array");
            }
            else if (kind == 2)
            {
                snprintf(tmp, sizeof(tmp), "seed %llu attribute %d", (unsigned long long)seed, a);
                CHKP(adios2_define_attribute(io, aname, adios2_type_string, tmp),
                     "adios2_define_attribute string");
            }
            else if (kind == 3)
            {
                const char *strs[3] = {"alpha", "beta gamma", "delta"};
                CHKP(adios2_define_attribute_array(io, aname, adios2_type_string, strs,
                                                   (size_t)rint_(&ar, 1, 3)),
                     "adios2_define_attribute_array string");
            }
            else
            {
                const var_t *V = &P->vars[rint_(&ar, 0, P->nvars - 1)];
                double d = (double)rint_(&ar, -100, 100) / 4.0;
                char vaname[32];
                snprintf(vaname, sizeof(vaname), "%s%d", chance(&ar, 50) ? "units" : "scale", a);
                if (vaname[0] == 'u')
                    CHKP(adios2_define_variable_attribute(io, vaname, adios2_type_string, "m/s",
                                                          V->name, "/"),
                         "adios2_define_variable_attribute");
                else
                    CHKP(adios2_define_variable_attribute(io, vaname, adios2_type_double, &d,
                                                          V->name, "/"),
                         "adios2_define_variable_attribute");
            }
        }
    }

    eng = adios2_open(io, argv[1], adios2_mode_write);
    CHKP(eng, "adios2_open");
    if (g_rank == 0)
    {
        printf("%s\n", P->bp5 ? "BP5" : "BP4");
        fflush(stdout);
    }

    for (s = 0; s < P->nsteps; ++s)
    {
        adios2_step_status st;
        CHK(adios2_begin_step(eng, adios2_step_mode_append, -1.0f, &st));
        for (i = 0; i < P->nvars; ++i)
        {
            var_t *V = &P->vars[i];
            size_t esz = TYPES[V->ti].sz;
            adios2_mode mode = V->deferred ? adios2_mode_deferred : adios2_mode_sync;
            if (V->kind == K_GV && g_rank != 0)
                continue;
            if (V->kind == K_GA)
                CHK(adios2_set_shape(V->v, V->ndim, V->shape[s]));
            for (b = 0; b < V->nblk[g_rank][s]; ++b)
            {
                rng_t dr = {seed * 1000003ULL + (uint64_t)i * 7919ULL + (uint64_t)s * 104729ULL +
                            (uint64_t)g_rank * 1299709ULL + (uint64_t)b * 15485863ULL};
                size_t n = 1;
                void *buf;
                if (V->kind == K_GA || V->kind == K_LA || V->kind == K_JA)
                {
                    n = V->cnt[g_rank][s][b][0] * (V->ndim == 2 ? V->cnt[g_rank][s][b][1] : 1);
                }
                buf = keep(n * esz);
                fill(buf, V->ti, n, &dr, V->big);
                if (V->kind == K_GA)
                    CHK(adios2_set_selection(V->v, V->ndim, V->start[g_rank][s][b],
                                             V->cnt[g_rank][s][b]));
                else if (V->kind == K_LA || V->kind == K_JA)
                    CHK(adios2_set_selection(V->v, V->ndim, NULL, V->cnt[g_rank][s][b]));
                CHK(adios2_put(eng, V->v, buf, mode));
            }
        }
        CHK(adios2_end_step(eng));
        release();
    }
    CHK(adios2_close(eng));
    CHK(adios2_finalize(adios));
    free(P);
    MPI_Finalize();
    return 0;
}
