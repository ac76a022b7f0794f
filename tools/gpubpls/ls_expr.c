/*
 * gpubpls: the canonical form of a derived variable's expression, as an ADIOS2 built with derived
 * variables prints it (bpls --show-derived): the stored text parsed with ADIOS2's expression
 * grammar (its flex lexer and bison parser, reimplemented here by hand) and printed as its
 * ToStringExpr prints the tree.
 *
 * The language: zero or more alias lines `name = target` (target a name or a path, optionally
 * followed by `[]`), then one expression. Tokens: numbers [0-9]+(.[0-9]+)?([eE][-+]?[0-9]+)?,
 * identifiers [a-zA-Z][a-zA-Z0-9_]*, paths [a-zA-Z][a-zA-Z0-9._/]* (the longer match wins, an
 * identifier on a tie: `sim/x` and `x/2` are paths, `x / 2` a division), `backquoted` names, and
 * = , : ( ) [ ] + - * / ^ ** (** is ^); blanks and newlines separate tokens. Precedence from
 * lowest: + - (left), * / (left), unary minus, ^ (right); so -a^b is -(a^b), a^-b*c is (a^-b)*c.
 * Calls name(args) allow an empty list and one trailing comma (f(a,) has one argument); id[] is
 * an index expression (the brackets hold nothing: ADIOS2's index rules are commented out).
 *
 * Printing: a variable is {name}, where an alias stands for its target as written (one level:
 * after a = x, b = a, b prints {a}; the first definition of a name wins); a number is its value
 * in "%f" (2 -> 2.000000); an operator is NAME(child,child,...), no spaces. Function names are
 * case-insensitive: ADD/SUM, SUBTRACT/MINUS, MULT/MULTIPLY, DIV/DIVIDE, NEGATE, SQRT, POW, SIN,
 * COS, TAN, ASIN, ACOS, ATAN, MAGNITUDE, CROSS, CURL, with ADIOS2's quirks kept: INDEX (and id[])
 * prints as UNKNOWN(...); ALIAS, PATH and NUM calls print NULL() and drop their arguments; a
 * negation of exactly one operand that is a number literal (through parentheses) folds into the
 * constant "-N" (-(3) is -3.000000, --3 is NEGATE(-3.000000)), of a NUM() call into "-".
 * Anything else is no canonical form (NULL): a syntax error, an unknown function name in what is
 * printed, a number out of a double's normal range (std::stod's out_of_range, as strtod's
 * ERANGE), and (a limit of ours) more than EX_MAX_DEPTH nested operands.
 */
#include "gpubpls/ls_expr.h"

#include "gpubpls/ls.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EX_MAX_DEPTH 1000 /* a few frames a level: well inside any stack, sanitizers included */

enum { EX_OK, EX_SYNTAX, EX_NOMEM };

typedef enum {
    T_END, T_BAD, T_NUM, T_ID, T_VAR, T_ASSIGN, T_COMMA, T_COLON, T_LPAR, T_RPAR, T_LBRK, T_RBRK,
    T_PLUS, T_MINUS, T_STAR, T_SLASH, T_CARET
} tok_kind;

/* What an operand is, for the folding of a negation: a number literal, a NUM() call, else. */
enum { K_OTHER, K_NUM, K_NUMCALL };

typedef struct token {
    tok_kind kind;
    const char *s; /* the token's text; a backquoted name's without the quotes */
    size_t n;
} token;

typedef struct alias {
    const char *name, *target;
    size_t nname, ntarget;
} alias;

typedef struct parser {
    const char *p; /* the next character to scan */
    token t;       /* the current token */
    alias *aliases;
    size_t naliases, capaliases;
    char *buf; /* the canonical text so far */
    size_t len, cap;
    int depth;
    int unknown; /* an unknown function name in what is printed */
} parser;

/* ---- the lexer ---------------------------------------------------------------------------- */

static int is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_id_char(char c) { return is_letter(c) || is_digit(c) || c == '_'; }
static int is_path_char(char c) { return is_id_char(c) || c == '.' || c == '/'; }

static void lex(parser *ps)
{
    static const char single[] = "=,:()[]+-*/^";
    static const tok_kind kinds[] = {T_ASSIGN, T_COMMA, T_COLON, T_LPAR,  T_RPAR,  T_LBRK,
                                     T_RBRK,   T_PLUS,  T_MINUS, T_STAR,  T_SLASH, T_CARET};
    const char *p = ps->p, *q;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    token *t = &ps->t;
    t->s = p;
    t->n = 1;
    ps->p = p + 1;
    if (*p == '\0') {
        t->kind = T_END;
        t->n = 0;
        ps->p = p;
    } else if (p[0] == '*' && p[1] == '*') {
        t->kind = T_CARET;
        ps->p = p + 2;
    } else if ((q = strchr(single, *p)) != NULL) {
        t->kind = kinds[q - single];
    } else if (is_digit(*p)) {
        q = p;
        while (is_digit(*q))
            q++;
        if (q[0] == '.' && is_digit(q[1]))
            for (q++; is_digit(*q); q++) {}
        if ((q[0] == 'e' || q[0] == 'E') &&
            (is_digit(q[1]) || ((q[1] == '+' || q[1] == '-') && is_digit(q[2]))))
            for (q += 2; is_digit(*q); q++) {}
        t->kind = T_NUM;
        t->n = (size_t)(q - p);
        ps->p = q;
    } else if (*p == '`' && p[1] != '`' && p[1] != '\0' && (q = strchr(p + 1, '`')) != NULL) {
        t->kind = T_VAR;
        t->s = p + 1;
        t->n = (size_t)(q - p - 1);
        ps->p = q + 1;
    } else if (is_letter(*p)) {
        size_t nid = 1, npath;
        while (is_id_char(p[nid]))
            nid++;
        for (npath = nid; is_path_char(p[npath]); npath++) {}
        t->kind = npath > nid ? T_VAR : T_ID;
        t->n = npath;
        ps->p = p + npath;
    } else {
        t->kind = T_BAD; /* flex's "invalid character"; an unclosed or empty backquote */
    }
}

/* ---- the output buffer -------------------------------------------------------------------- */

/* Room for n more bytes of text and its NUL. */
static int reserve(parser *ps, size_t n)
{
    return ls_grow((void **)&ps->buf, &ps->cap, ps->len + n + 1, 1, 64) ? EX_NOMEM : EX_OK;
}

/* Inserts s[0, n) at position `at` of the text (at == len appends). */
static int insert(parser *ps, size_t at, const char *s, size_t n)
{
    if (reserve(ps, n) != EX_OK)
        return EX_NOMEM;
    memmove(ps->buf + at + n, ps->buf + at, ps->len - at);
    memcpy(ps->buf + at, s, n);
    ps->len += n;
    return EX_OK;
}

static int put(parser *ps, const char *s) { return insert(ps, ps->len, s, strlen(s)); }

/* A variable leaf: {name}, an alias replaced by its target. */
static int put_var(parser *ps, const char *name, size_t n)
{
    for (size_t i = 0; i < ps->naliases; i++)
        if (ps->aliases[i].nname == n && memcmp(ps->aliases[i].name, name, n) == 0) {
            name = ps->aliases[i].target;
            n = ps->aliases[i].ntarget;
            break;
        }
    if (put(ps, "{") != EX_OK || insert(ps, ps->len, name, n) != EX_OK || put(ps, "}") != EX_OK)
        return EX_NOMEM;
    return EX_OK;
}

/* A number token's constant: std::stod's value (out of range is an error) in std::to_string's
 * "%f". */
static int put_num(parser *ps, const token *t)
{
    char *s = malloc(t->n + 1);
    if (!s)
        return EX_NOMEM;
    memcpy(s, t->s, t->n);
    s[t->n] = '\0';
    errno = 0;
    double v = strtod(s, NULL);
    int range = errno == ERANGE;
    free(s);
    if (range)
        return EX_SYNTAX;
    int n = snprintf(NULL, 0, "%f", v);
    if (n < 0 || reserve(ps, (size_t)n) != EX_OK)
        return EX_NOMEM;
    snprintf(ps->buf + ps->len, (size_t)n + 1, "%f", v);
    ps->len += (size_t)n;
    return EX_OK;
}

/* The negation of the operand printed at [arg, len), itself starting a node at `at` (the text
 * up to arg is the node's opening, "NEGATE(" once written). */
static int put_negation(parser *ps, size_t at, size_t arg, int kind)
{
    if (kind == K_OTHER) {
        if (arg == at && insert(ps, at, "NEGATE(", 7) != EX_OK)
            return EX_NOMEM;
        return put(ps, ")");
    }
    size_t n = kind == K_NUM ? ps->len - arg : 0; /* a NUM() call's "number" is empty */
    if (reserve(ps, 1) != EX_OK)
        return EX_NOMEM;
    memmove(ps->buf + at + 1, ps->buf + arg, n);
    ps->buf[at] = '-';
    ps->len = at + 1 + n;
    return EX_OK;
}

/* ---- the parser --------------------------------------------------------------------------- */

static int parse_exp(parser *ps, int minprec, int *kind);

static const char *function_name(const char *s, size_t n)
{
    static const char *const names[][2] = {
        {"ADD", "ADD"},     {"SUM", "ADD"},       {"SUBTRACT", "SUBTRACT"}, {"MINUS", "SUBTRACT"},
        {"MULT", "MULT"},   {"MULTIPLY", "MULT"}, {"DIV", "DIV"},           {"DIVIDE", "DIV"},
        {"NEGATE", "NEGATE"}, {"SQRT", "SQRT"},   {"POW", "POW"},           {"SIN", "SIN"},
        {"COS", "COS"},     {"TAN", "TAN"},       {"ASIN", "ASIN"},         {"ACOS", "ACOS"},
        {"ATAN", "ATAN"},   {"MAGNITUDE", "MAGNITUDE"}, {"CROSS", "CROSS"}, {"CURL", "CURL"},
        {"INDEX", "UNKNOWN"}, {"ALIAS", "NULL"},  {"PATH", "NULL"},         {"NUM", "NUM"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t k = 0;
        while (k < n && names[i][0][k] != '\0' &&
               (s[k] == names[i][0][k] || s[k] == names[i][0][k] - 'A' + 'a'))
            k++;
        if (k == n && names[i][0][k] == '\0')
            return names[i][1];
    }
    return NULL;
}

/* name(args): the current token is the "(". */
static int parse_call(parser *ps, const char *name, size_t n, int *kind)
{
    const char *op = function_name(name, n);
    size_t at = ps->len, arg = at;
    int saved_unknown = ps->unknown, nargs = 0, k = K_OTHER, rc;
    if (!op)
        ps->unknown = 1;
    if ((rc = put(ps, op ? op : "?")) != EX_OK || (rc = put(ps, "(")) != EX_OK)
        return rc;
    lex(ps);
    while (ps->t.kind != T_RPAR) {
        if (nargs > 0 && (rc = put(ps, ",")) != EX_OK)
            return rc;
        arg = ps->len;
        if ((rc = parse_exp(ps, 1, &k)) != EX_OK)
            return rc;
        nargs++;
        if (ps->t.kind != T_COMMA)
            break;
        lex(ps);
    }
    if (ps->t.kind != T_RPAR)
        return EX_SYNTAX;
    lex(ps);
    *kind = K_OTHER;
    if (op && (strcmp(op, "NULL") == 0 || strcmp(op, "NUM") == 0)) {
        /* a leaf with neither name nor value: its arguments are never looked at */
        ps->unknown = saved_unknown;
        ps->len = at;
        *kind = strcmp(op, "NUM") == 0 ? K_NUMCALL : K_OTHER;
        return put(ps, "NULL()");
    }
    if (op && strcmp(op, "NEGATE") == 0 && nargs == 1)
        return put_negation(ps, at, arg, k);
    return put(ps, ")");
}

static int parse_primary(parser *ps, int *kind)
{
    token t = ps->t;
    int rc;
    *kind = K_OTHER;
    switch (t.kind) {
    case T_NUM:
        *kind = K_NUM;
        lex(ps);
        return put_num(ps, &t);
    case T_VAR:
        lex(ps);
        return put_var(ps, t.s, t.n);
    case T_LPAR:
        lex(ps);
        if ((rc = parse_exp(ps, 1, kind)) != EX_OK)
            return rc;
        if (ps->t.kind != T_RPAR)
            return EX_SYNTAX;
        lex(ps);
        return EX_OK;
    case T_ID:
        lex(ps);
        if (ps->t.kind == T_LPAR)
            return parse_call(ps, t.s, t.n, kind);
        if (ps->t.kind != T_LBRK)
            return put_var(ps, t.s, t.n);
        lex(ps);
        if (ps->t.kind != T_RBRK)
            return EX_SYNTAX;
        lex(ps);
        if ((rc = put(ps, "UNKNOWN(")) != EX_OK || (rc = put_var(ps, t.s, t.n)) != EX_OK)
            return rc;
        return put(ps, ")");
    default:
        return EX_SYNTAX;
    }
}

/* bison's precedence levels; unary minus is 3 */
static int binary_prec(tok_kind k)
{
    return k == T_PLUS || k == T_MINUS ? 1 : k == T_STAR || k == T_SLASH ? 2 : k == T_CARET ? 4 : 0;
}

/* An expression of operators of precedence minprec or more (precedence climbing). */
static int parse_exp(parser *ps, int minprec, int *kind)
{
    static const char *const opnames[] = {[T_PLUS] = "ADD(", [T_MINUS] = "SUBTRACT(",
                                          [T_STAR] = "MULT(", [T_SLASH] = "DIV(",
                                          [T_CARET] = "POW("};
    size_t at = ps->len;
    int rc, k;
    if (++ps->depth > EX_MAX_DEPTH)
        return EX_SYNTAX;
    if (ps->t.kind == T_MINUS) {
        lex(ps);
        if ((rc = parse_exp(ps, 4, &k)) != EX_OK || (rc = put_negation(ps, at, at, k)) != EX_OK)
            return rc;
        *kind = K_OTHER;
    } else if ((rc = parse_primary(ps, kind)) != EX_OK) {
        return rc;
    }
    for (int prec; (prec = binary_prec(ps->t.kind)) != 0 && prec >= minprec;) {
        const char *op = opnames[ps->t.kind];
        lex(ps);
        if ((rc = insert(ps, at, op, strlen(op))) != EX_OK || (rc = put(ps, ",")) != EX_OK ||
            (rc = parse_exp(ps, prec == 4 ? 4 : prec + 1, &k)) != EX_OK ||
            (rc = put(ps, ")")) != EX_OK)
            return rc;
        *kind = K_OTHER;
    }
    ps->depth--;
    return EX_OK;
}

/* The alias lines: name = target, name = target[]. */
static int parse_aliases(parser *ps)
{
    while (ps->t.kind == T_ID) {
        parser peek = *ps;
        lex(&peek);
        if (peek.t.kind != T_ASSIGN)
            return EX_OK;
        alias a = {ps->t.s, NULL, ps->t.n, 0};
        ps->p = peek.p;
        lex(ps);
        if (ps->t.kind != T_ID && ps->t.kind != T_VAR)
            return EX_SYNTAX;
        a.target = ps->t.s;
        a.ntarget = ps->t.n;
        lex(ps);
        if (ps->t.kind == T_LBRK) {
            lex(ps);
            if (ps->t.kind != T_RBRK)
                return EX_SYNTAX;
            lex(ps);
        }
        if (ls_grow((void **)&ps->aliases, &ps->capaliases, ps->naliases + 1, sizeof *ps->aliases, 8))
            return EX_NOMEM;
        ps->aliases[ps->naliases++] = a; /* put_var takes the first definition of a name */
    }
    return EX_OK;
}

int ls_expr_canonical(const char *expr, char **out)
{
    parser ps = {.p = expr};
    int rc, kind;
    *out = NULL;
    lex(&ps);
    rc = parse_aliases(&ps);
    if (rc == EX_OK)
        rc = parse_exp(&ps, 1, &kind);
    if (rc == EX_OK && (ps.t.kind != T_END || ps.unknown))
        rc = EX_SYNTAX;
    free(ps.aliases);
    if (rc == EX_OK && reserve(&ps, 0) != EX_OK)
        rc = EX_NOMEM;
    if (rc != EX_OK) {
        free(ps.buf);
        return rc == EX_NOMEM;
    }
    ps.buf[ps.len] = '\0';
    *out = ps.buf;
    return 0;
}
