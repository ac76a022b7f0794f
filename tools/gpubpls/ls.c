/* gpubpls: the error reports and the context's memory (ls.h), shared by every file of the tool. */
#include "gpubpls/ls.h"

#include <stdlib.h>

int ls_lib_error(const ls_ctx *c, int status, const char *what, const char *name)
{
    if (c && c->out)
        fflush(c->out);
    const char *msg = gpubp_last_error();
    fprintf(stderr, "gpubpls: error %s %s: %s%s%s\n", what, name ? name : "",
            gpubp_strerror(status), *msg ? ": " : "", msg);
    return LS_FAIL;
}

int ls_nomem(void)
{
    fprintf(stderr, "gpubpls: error: out of memory\n");
    return LS_FAIL;
}

int ls_grow(void **arr, size_t *cap, size_t need, size_t size, size_t first)
{
    if (need <= *cap)
        return 0;
    size_t want = *cap ? *cap : first;
    while (want < need)
        want *= 2;
    void *p = realloc(*arr, want * size);
    if (!p)
        return 1;
    *arr = p;
    *cap = want;
    return 0;
}

void ls_ctx_free(ls_ctx *c)
{
    for (size_t k = 0; k < c->stepmap_n; k++) {
        free(c->stepmap[k].name);
        free(c->stepmap[k].steps);
    }
    free(c->stepmap);
    c->stepmap = NULL;
    c->stepmap_n = c->stepmap_cap = 0;
    for (size_t k = 0; k < c->ndumped; k++)
        free(c->dumped[k]);
    free(c->dumped);
    c->dumped = NULL;
    c->ndumped = c->capdumped = 0;
}
