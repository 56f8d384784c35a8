/* quant_small.h's scale of 8- and 16-bit inputs (SMMULR on Armv7E-M / v8-M DSP, VQRDMULH on
 * Helium, then the rounding right shift as (2 * high - [high < 0] + 2^r) >> (r + 1)) against
 * mb_mul_by_quantized_multiplier (quant.h, bit-exact with TFLM), both instructions emulated here
 * by their definitions in 64-bit arithmetic, the rest as the kernel writes it: every x of each
 * input width with edge and random multipliers, over every shift mb_small_scale_of admits, and
 * samples of 28-bit x (the int8 ADD's shifted inputs). Prints
 * the number of mismatches; exits 1 if any. */
#include <stdio.h>
#include "microbuild/quant.h"

static uint64_t s = 88172645463325252ull;
static uint32_t rnd(void){ s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (uint32_t)s; }

/* SMMULR: the high word of a * b, rounded (+ 2^31 before the shift). */
static int32_t smmulr(int32_t a, int32_t b){
  return (int32_t)(((int64_t)a * b + ((int64_t)1 << 31)) >> 32);
}
/* VQRDMULH on one lane: (2 * a * b + 2^31) >> 32, saturated. */
static int32_t vqrdmulh(int32_t a, int32_t b){
  int64_t r = ((int64_t)2 * a * b + ((int64_t)1 << 31)) >> 32;
  return r > INT32_MAX ? INT32_MAX : (int32_t)r;
}
/* VRSHL by -n (n >= 1) on one lane: (t + 2^(n - 1)) >> n without overflow. */
static int32_t vrshl_right(int32_t t, int n){
  return (int32_t)(((int64_t)t + ((int64_t)1 << (n - 1))) >> n);
}

static int32_t smmulr_path(int32_t x, int32_t m, int left, int right){
  int32_t high = smmulr((int32_t)((uint32_t)x << (left + 1)), m);
  int32_t t = (int32_t)(((uint32_t)high << 1) + (uint32_t)(high >> 31) + ((uint32_t)1 << right));
  return t >> (right + 1);
}
static int32_t helium_path(int32_t x, int32_t m, int left, int right){
  int32_t high = vqrdmulh((int32_t)((uint32_t)x << left), m);
  int32_t t = (int32_t)((uint32_t)high + (uint32_t)high + (uint32_t)(high >> 31));
  return vrshl_right(t, right + 1);
}

int main(void){
  long bad = 0, cases = 0;
  const int32_t edge_m[] = {INT32_MAX, 1 << 30, (1 << 30) + 1, 1518500250, 1073741825, 2147483000};
  for (int bits = 8; bits <= 16; bits += 8) {
    const int32_t limit = (1 << bits) - 1; /* |in - zp| for an input of `bits` bits */
    for (int shift = -29; shift <= 30 - bits; shift++) {
      const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
      for (int k = 0; k < 14; k++) {
        const int32_t m = k < 6 ? edge_m[k] : (int32_t)((rnd() >> 1) | (1u << 30));
        for (int32_t x = -limit; x <= limit; x += (bits == 8 ? 1 : 1 + (int32_t)(rnd() % 5))) {
          const int32_t want = mb_mul_by_quantized_multiplier(x, m, shift);
          const int32_t a = smmulr_path(x, m, left, right), b = helium_path(x, m, left, right);
          cases++;
          if (a != want || b != want) {
            if (bad++ < 5)
              printf("bits=%d x=%d m=%d shift=%d ref=%d smmulr=%d helium=%d\n", bits, x, m,
                     shift, want, a, b);
          }
        }
      }
    }
  }
  /* 28 bits: the int8 ADD's inputs shifted left by 20 (conv2d_dsp.c's residual tables), sampled */
  for (int shift = -29; shift <= 2; shift++) {
    const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    for (int k = 0; k < 200000; k++) {
      const int32_t m = k < 6 ? edge_m[k] : (int32_t)((rnd() >> 1) | (1u << 30));
      const int32_t x = (int32_t)(rnd() % (2u * ((1u << 28) - 1) + 1)) - ((1 << 28) - 1);
      const int32_t want = mb_mul_by_quantized_multiplier(x, m, shift);
      const int32_t a = smmulr_path(x, m, left, right), b = helium_path(x, m, left, right);
      cases++;
      if (a != want || b != want) {
        if (bad++ < 5)
          printf("bits=28 x=%d m=%d shift=%d ref=%d smmulr=%d helium=%d\n", x, m, shift, want,
                 a, b);
      }
    }
  }
  printf("cases %ld mismatches %ld\n", cases, bad); return bad != 0;
}
