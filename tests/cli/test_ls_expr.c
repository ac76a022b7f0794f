/* gpubpls --show-derived: the canonical form of derived variables' expressions
 * (tools/gpubpls/ls_expr.c) against what ADIOS2's own parser and printer give for the same texts
 * (detail::ParseToExprNode, derived::ToStringExpr of ADIOS2's development line, commit ecf587ce8,
 * built with derived variables, run outside the project on 2026-12-07; the table below is its
 * output, copied). NULL: ADIOS2 rejects the text (gpubpls then prints it as stored). Also: a
 * deep nesting is refused, not a stack overflow. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpubpls/ls_expr.h"
#include "support/test_support.h"

static const struct { const char *in, *want; } kCases[] = {
    {"a = sim/x\nb = sim/y\na-b", "SUBTRACT({sim/x},{sim/y})"},
    {"a = sim/x\nb = a\nb", "{a}"},
    {"a = sim/x\na = sim/y\na", "{sim/x}"},
    {"a=`sp ace`\na*2", "MULT({sp ace},2.000000)"},
    {"a = sim/x[]\na+1", "ADD({sim/x},1.000000)"},
    {"a+b*c-x/y^z", "SUBTRACT(ADD({a},MULT({b},{c})),POW({x/y},{z}))"},
    {"a+b*c-x / y^z", "SUBTRACT(ADD({a},MULT({b},{c})),DIV({x},POW({y},{z})))"},
    {"(a+b)*(c-x)", "MULT(ADD({a},{b}),SUBTRACT({c},{x}))"},
    {"-a", "NEGATE({a})"},
    {"-3", "-3.000000"},
    {"-3.5e2*a", "MULT(-350.000000,{a})"},
    {"--a", "NEGATE(NEGATE({a}))"},
    {"-(a)", "NEGATE({a})"},
    {"-(3)", "-3.000000"},
    {"a^-2", "POW({a},-2.000000)"},
    {"-a^2", "NEGATE(POW({a},2.000000))"},
    {"a**2**3", "POW({a},POW(2.000000,3.000000))"},
    {"a^b^c", "POW({a},POW({b},{c}))"},
    {"sqrt(a)", "SQRT({a})"},
    {"SQRT(a*a+b*b)", "SQRT(ADD(MULT({a},{a}),MULT({b},{b})))"},
    {"pow(a,2)", "POW({a},2.000000)"},
    {"Pow(a, 0.5)", "POW({a},0.500000)"},
    {"magnitude(sim/x,sim/y,sim/z)", "MAGNITUDE({sim/x},{sim/y},{sim/z})"},
    {"Magnitude(a,b)", "MAGNITUDE({a},{b})"},
    {"MAGNITUDE(a,b,c)", "MAGNITUDE({a},{b},{c})"},
    {"Add(a,b)", "ADD({a},{b})"},
    {"add(a,b,c,x)", "ADD({a},{b},{c},{x})"},
    {"SUM(a,b)", "ADD({a},{b})"},
    {"sum(a,b,c)", "ADD({a},{b},{c})"},
    {"minus(a,b)", "SUBTRACT({a},{b})"},
    {"Subtract(a,b)", "SUBTRACT({a},{b})"},
    {"mult(a,b)", "MULT({a},{b})"},
    {"Multiply(a,2)", "MULT({a},2.000000)"},
    {"div(a,b)", "DIV({a},{b})"},
    {"DIVIDE(a,3)", "DIV({a},3.000000)"},
    {"negate(a)", "NEGATE({a})"},
    {"NEGATE(3)", "-3.000000"},
    {"negate(-3)", "NEGATE(-3.000000)"},
    {"sin(a)", "SIN({a})"},
    {"cos(a)+tan(b)", "ADD(COS({a}),TAN({b}))"},
    {"asin(a/100)", "ASIN({a/100})"},
    {"ACOS(x / 100)", "ACOS(DIV({x},100.000000))"},
    {"atan(a)", "ATAN({a})"},
    {"`sim/x`+`sim/y`", "ADD({sim/x},{sim/y})"},
    {"`sp ace`*2", "MULT({sp ace},2.000000)"},
    {"`a+b`-a", "SUBTRACT({a+b},{a})"},
    {"sim/x*sim/y", "MULT({sim/x},{sim/y})"},
    {"sim/x**2", "POW({sim/x},2.000000)"},
    {"1.5*a", "MULT(1.500000,{a})"},
    {"1e3+a", "ADD(1000.000000,{a})"},
    {"1E-3*a", "MULT(0.001000,{a})"},
    {"2.5e+2*a", "MULT(250.000000,{a})"},
    {"0.000001*a", "MULT(0.000001,{a})"},
    {"0.0000001*a", "MULT(0.000000,{a})"},
    {"123456789012*a", "MULT(123456789012.000000,{a})"},
    {"007*a", "MULT(7.000000,{a})"},
    {"a*(b+(c*(x+(y*z))))", "MULT({a},ADD({b},MULT({c},ADD({x},MULT({y},{z})))))"},
    {"sqrt(pow(a,2)+pow(b,2))", "SQRT(ADD(POW({a},2.000000),POW({b},2.000000)))"},
    {"a - -b", "SUBTRACT({a},NEGATE({b}))"},
    {"a--b", "SUBTRACT({a},NEGATE({b}))"},
    {"a+-b", "ADD({a},NEGATE({b}))"},
    {"-a*-b", "MULT(NEGATE({a}),NEGATE({b}))"},
    {"-(a+b)", "NEGATE(ADD({a},{b}))"},
    {"-(-(a))", "NEGATE(NEGATE({a}))"},
    {"x.y+Temp", "ADD({x.y},{Temp})"},
    {"v0/v1", "{v0/v1}"},
    {"v0 / v1", "DIV({v0},{v1})"},
    {"in_1^E1", "POW({in_1},{E1})"},
    {"e*E1", "MULT({e},{E1})"},
    {"add(a,b,)", "ADD({a},{b})"},
    {"magnitude(a,b,c,)", "MAGNITUDE({a},{b},{c})"},
    {"a=sim/x\nb=sim/y\nc=sim/z\nmagnitude(a,b,c)", "MAGNITUDE({sim/x},{sim/y},{sim/z})"},
    {"a = b\nb = c\na+b", "ADD({b},{c})"},
    {" a \t+\n b ", "ADD({a},{b})"},
    {"a\r\n+b", "ADD({a},{b})"},
    {"sqrt (a)", "SQRT({a})"},
    {"Sqrt\n(a)", "SQRT({a})"},
    {"(((a)))", "{a}"},
    {"((3))*a", "MULT(3.000000,{a})"},
    {"a*-(3)", "MULT({a},-3.000000)"},
    {"a/-3", "SUBTRACT({a/},3.000000)"},
    {"a/(-3)", NULL},
    {"-a/-3^2", "SUBTRACT(NEGATE({a/}),POW(3.000000,2.000000))"},
    {"2^-a", "POW(2.000000,NEGATE({a}))"},
    {"a^(-2)", "POW({a},-2.000000)"},
    {"-2^a", "NEGATE(POW(2.000000,{a}))"},
    {"(-2)^a", "POW(-2.000000,{a})"},
};

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof kCases / sizeof *kCases; i++) {
        char *got = (char *)"x";
        assert_int_equal(ls_expr_canonical(kCases[i].in, &got), 0);
        if (!kCases[i].want) {
            if (got) print_error("case %zu: got '%s', want NULL\n", i, got);
            assert_null(got);
            continue;
        }
        if (!got || strcmp(got, kCases[i].want) != 0)
            print_error("case %zu: '%s' -> '%s', want '%s'\n", i, kCases[i].in,
                        got ? got : "(null)", kCases[i].want);
        assert_non_null(got);
        assert_string_equal(got, kCases[i].want);
        free(got);
    }
}

static void test_errors(void **state)
{
    (void)state;
    const char *bad[] = {"", "a +", "x[1]", "(a", "a)", "a = ", "unknownfn(a)", "a $ b", "1e999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *got = (char *)"x";
        assert_int_equal(ls_expr_canonical(bad[i], &got), 0);
        assert_null(got);
    }
    size_t n = 200000; /* 100 000 nested parentheses */
    char *deep = malloc(n + 2);
    assert_non_null(deep);
    memset(deep, '(', n / 2);
    deep[n / 2] = 'a';
    memset(deep + n / 2 + 1, ')', n / 2);
    deep[n + 1] = '\0';
    char *got = (char *)"x";
    assert_int_equal(ls_expr_canonical(deep, &got), 0);
    assert_null(got);
    free(deep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_table), cmocka_unit_test(test_errors)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
