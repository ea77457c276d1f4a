// expect: compile_error
/* A macro bomb: every level expands its argument 4 times (4^14 copies). */
#define A0(x) x x x x
#define A1(x) A0(A0(x))
#define A2(x) A1(A1(x))
#define A3(x) A2(A2(x))
#define A4(x) A3(A3(x))
#define A5(x) A4(A4(x))
#define A6(x) A5(A5(x))
static const char bomb[] = A6("0123456789abcdef0123456789abcdef");
