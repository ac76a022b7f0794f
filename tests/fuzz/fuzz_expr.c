/* Fuzz target: gpubpls's parser and printer of derived variables' expressions
 * (tools/gpubpls/ls_expr.c), whose input is text a dataset stores. Input: the expression (made
 * NUL-terminated). Oracle: 0 with NULL or a NUL-terminated string, or 1 (no memory), never a
 * crash, a leak or a read past the text; the same text gives the same result twice. */
#include "fuzz/fuzz_util.h"

#include "gpubpls/ls_expr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *a = (char *)"x", *b = (char *)"x";
    int ra = ls_expr_canonical(text, &a), rb = ls_expr_canonical(text, &b);
    if ((ra != 0 && ra != 1) || ra != rb) abort();
    if (ra == 0 && ((a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0))) abort();
    if (ra == 0 && a && strlen(a) == 0) abort(); /* a canonical form is never empty */
    if (ra == 0) {
        free(a);
        free(b);
    }
    free(text);
    return 0;
}
