/* A shared library whose constructor computes, as libraries that build
 * tables at load time do: CTOR_N rounds of x = x * a + b, before main.
 *
 *   build: -O1 -shared -fPIC (no FMA contraction)
 *   flop.total of the constructor = 2 CTOR_N (a multiply and an add each)
 */
#define CTOR_N 3000

static double table_x;

__attribute__((constructor)) static void build_table(void) {
  volatile double a = 1.0001, b = 0.5;
  double x = 1.0;
  for (int i = 0; i < CTOR_N; i++)
    x = x * a + b;
  table_x = x;
}

double ctor_result(void) { return table_x; }
