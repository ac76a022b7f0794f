/* Reads struct_gen.cpp's OUT.bp through libgpubp and compares every step's records (global arrays
 * whole, local arrays block by block) with OUT.truth:
 *   cc struct_check.c -lgpubp -o struct_check && ./struct_check OUT.bp   (exit 0: equal) */
#include <gpubp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
  char p[4096]; snprintf(p, sizeof p, "%s.man", argv[1]); FILE *m = fopen(p, "r");
  snprintf(p, sizeof p, "%s.truth", argv[1]); FILE *t = fopen(p, "rb");
  int ns; if (fscanf(m, "%d", &ns) != 1) return 2;
  char names[8][64]; int loc[8]; size_t rec[8], n[8]; int nv = 0;
  while (nv < 8 && fscanf(m, "%63s %d %zu %zu", names[nv], &loc[nv], &rec[nv], &n[nv]) == 4) nv++;
  gpubp_file *f; if (gpubp_open(&f, argv[1], GPUBP_MODE_READ_RANDOM_ACCESS, NULL)) { printf("open: %s\n", gpubp_last_error()); return 1; }
  int bad = 0;
  for (int s = 0; s < ns; s++) for (int i = 0; i < nv; i++) {
    size_t bytes = rec[i] * n[i]; unsigned char *w = malloc(bytes), *g = calloc(1, bytes);
    if (fread(w, 1, bytes, t) != bytes) return 3;
    gpubp_variable *v; if (gpubp_inquire_variable(&v, f, names[i])) { printf("%s: %s\n", names[i], gpubp_last_error()); bad++; continue; }
    size_t es = 0; gpubp_variable_element_size(v, &es); if (es != rec[i]) { printf("%s es %zu want %zu\n", names[i], es, rec[i]); bad++; }
    gpubp_set_step_selection(v, s, 1);
    if (!loc[i]) { if (gpubp_get(f, v, g, GPUBP_SYNC)) { printf("get %s\n", gpubp_last_error()); bad++; } }
    else { size_t nb = 0, off = 0; gpubp_variable_blocks(v, s, &nb);
      for (size_t b = 0; b < nb; b++) { size_t sz; gpubp_set_block_selection(v, b); gpubp_selection_size(v, &sz);
        if (off + sz > bytes || gpubp_get(f, v, g + off, GPUBP_SYNC)) { printf("block get\n"); bad++; break; } off += sz; }
      if (off != bytes) { printf("%s: local %zu of %zu\n", names[i], off, bytes); bad++; } }
    if (memcmp(w, g, bytes)) { printf("%s step %d differs\n", names[i], s); bad++; }
    free(w); free(g);
  }
  gpubp_close(f); return bad ? 1 : 0;
}
