/* mb_requantize_fast (quant_fast.h) against mb_mul_by_quantized_multiplier (quant.h, bit-exact
 * with TFLM): 20 million seeded cases over every shift the compiler emits, edge values of x and
 * the extreme positive multipliers. Prints the number of mismatches; exits 1 if any. */
#include <stdio.h>
#include <stdlib.h>
#include "microbuild/quant.h"
#include "microbuild/quant_fast.h"
static uint64_t s = 88172645463325252ull;
static uint32_t rnd(void){ s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (uint32_t)s; }
int main(void){
  long bad = 0;
  int32_t edge[] = {0, 1, -1, 2, -2, INT32_MAX, INT32_MIN, INT32_MAX-1, INT32_MIN+1, 1<<30, -(1<<30), 12345, -12345};
  for (long i = 0; i < 20000000; i++) {
    int32_t x = (i % 7 == 0) ? edge[rnd() % 13] : (int32_t)rnd();
    if (i % 3 == 0) x >>= (rnd() % 31);
    int32_t m = (int32_t)((rnd() >> 1) | (1u << 30));
    if (i % 11 == 0) m = INT32_MAX;
    if (i % 13 == 0) m = 1 << 30;
    int32_t sh = (int32_t)(rnd() % 40) - 31;
    if (sh > 0 && (i % 2)) { x >>= 8; }
    int32_t a = mb_mul_by_quantized_multiplier(x, m, sh), b = mb_requantize_fast(x, m, sh);
    if (a != b) { if (bad++ < 5) printf("x=%d m=%d sh=%d ref=%d fast=%d\n", x, m, sh, a, b); }
  }
  printf("mismatches %ld\n", bad); return bad != 0;
}
