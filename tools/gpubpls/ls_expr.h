/* tools/gpubpls/ls_expr.h: the canonical form of a derived variable's expression (ls_expr.c), as
 * bpls --show-derived prints it. */
#ifndef GPUBPLS_LS_EXPR_H
#define GPUBPLS_LS_EXPR_H

/* ADIOS2's canonical form of a derived variable's expression (as its BP5Reader::VariableExprStr
 * returns it in a build with derived variables): a malloc'd string in *out, or NULL when the text
 * is not in ADIOS2's grammar (the caller then prints the text as stored). Returns 0, or 1 when out
 * of memory. "a = sim/x\nb = sim/y\na-b" gives "SUBTRACT({sim/x},{sim/y})". */
int ls_expr_canonical(const char *expr, char **out);

#endif /* GPUBPLS_LS_EXPR_H */
