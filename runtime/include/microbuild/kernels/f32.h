/* What every float32 kernel shares, so that each computes its outputs with the same float
 * operations, in the same order, as TFLM's reference kernel, and gives identical bits.
 *
 * Fused multiply-add. TFLM's kernels are C++ that GCC compiles with its default
 * -ffp-contract=fast: on a core with a single-precision FMA (the FPU of the Cortex-M4F, M7,
 * M33 and M55: __ARM_FEATURE_FMA), each `sum += a * b` of a reference loop becomes one fused
 * VFMA (the TFLM firmwares in ../shared/anchors/tflm: FullyConnectedEval's float loop is
 * `vfma.f32` then a `vadd.f32` of the bias). x86-64 has no FMA in its baseline instruction set,
 * which TFLM's Python wheel is built for (its _runtime.so has no vfmadd), so there it is a
 * multiply then an add; so it is on cores without an FPU (soft float never fuses). That is why
 * TFLM-on-Arm and TFLM-on-x86 differ by an ULP here and there, and why MB_F32_MULADD fuses
 * exactly where GCC fused TFLM's loop: explicitly, through __builtin_fmaf (one VFMA, never a
 * library call, when __ARM_FEATURE_FMA is defined), and nowhere else. The float kernels are
 * built with contraction off (the pragma below for clang, which contracts by default; GCC's C
 * modes -std=c99/c11 never contract), so no other multiply and add are fused behind our back.
 *
 * Never -ffast-math: it reorders sums. expf, tanhf and logf are the C library's, as in TFLM (its
 * std::exp(float) is expf): newlib's on the device, glibc's on the host. */
#ifndef MICROBUILD_KERNELS_F32_H
#define MICROBUILD_KERNELS_F32_H

#include <float.h>
#include <stdint.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#if defined(__ARM_FEATURE_FMA) && defined(__ARM_FP) && (__ARM_FP & 4)
#define MB_F32_FUSED 1
/* sum + a * b rounded once, as the VFMA GCC made of TFLM's `sum += a * b`. */
#define MB_F32_MULADD(sum, a, b) __builtin_fmaf((a), (b), (sum))
#else
#define MB_F32_FUSED 0
/* sum + a * b rounded twice, as TFLM on x86-64 and on cores without an FPU. */
#define MB_F32_MULADD(sum, a, b) ((sum) + (a) * (b))
#endif

/* TFLM's ActivationFunctionWithMinMax: std::min(std::max(x, lo), hi). Applied even without a
 * fused activation (lo = -FLT_MAX, hi = FLT_MAX), where it turns an infinity into +-FLT_MAX, and
 * a NaN passes through, as in TFLM. */
static inline float mb_f32_clamp(float x, float lo, float hi)
{
    const float low = x < lo ? lo : x;
    return hi < low ? hi : low;
}

/* A fused activation's range (CalculateActivationRange<float>). */
typedef struct {
    float min;
    float max;
} mb_f32_range;

#endif
