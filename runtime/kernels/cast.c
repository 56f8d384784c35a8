#include "microbuild/kernels/cast.h"

#include <string.h>

/* The value modulo 2^bits in a signed type of that width, without C's implementation-defined
 * conversion of an out-of-range value (compilers turn each into one sign-extending move). */
static inline int8_t wrap_s8(uint32_t v)
{
    return (int8_t)((int32_t)(v & 0xFFu) - (int32_t)((v & 0x80u) << 1));
}

static inline int16_t wrap_s16(uint32_t v)
{
    return (int16_t)((int32_t)(v & 0xFFFFu) - (int32_t)((v & 0x8000u) << 1));
}

static inline int32_t wrap_s32(uint32_t v)
{
    return v < 0x80000000u ? (int32_t)v : -(int32_t)(~v) - 1;
}

static inline uint8_t wrap_u8(uint32_t v) { return (uint8_t)v; }
static inline uint16_t wrap_u16(uint32_t v) { return (uint16_t)v; }
static inline uint32_t wrap_u32(uint32_t v) { return v; }

/* One function per (input, output) type pair, named by the compiler, so the element loop is a
 * load, at most one extension and a store (the reference switched on both types for every
 * element) and --gc-sections keeps only the pairs a model uses. The value goes through uint32_t,
 * which C defines modulo 2^32 for every input type. */
#define MB_DEFINE_CAST(src_name, SrcT, dst_name, DstT)                                           \
    void mb_cast_##src_name##_to_##dst_name(const void *input, void *output, int32_t size)      \
    {                                                                                           \
        const SrcT *src = (const SrcT *)input;                                                  \
        DstT *dst = (DstT *)output;                                                             \
        for (int32_t i = 0; i < size; i++) {                                                    \
            dst[i] = wrap_##dst_name((uint32_t)src[i]);                                         \
        }                                                                                       \
    }

/* Every pair of different widths, from each input type. */
#define MB_DEFINE_CASTS_FROM(src_name, SrcT)                                                     \
    MB_DEFINE_CAST(src_name, SrcT, s8, int8_t)                                                  \
    MB_DEFINE_CAST(src_name, SrcT, u8, uint8_t)                                                 \
    MB_DEFINE_CAST(src_name, SrcT, s16, int16_t)                                                \
    MB_DEFINE_CAST(src_name, SrcT, u16, uint16_t)                                               \
    MB_DEFINE_CAST(src_name, SrcT, s32, int32_t)                                                \
    MB_DEFINE_CAST(src_name, SrcT, u32, uint32_t)

MB_DEFINE_CASTS_FROM(s8, int8_t)
MB_DEFINE_CASTS_FROM(u8, uint8_t)
MB_DEFINE_CASTS_FROM(s16, int16_t)
MB_DEFINE_CASTS_FROM(u16, uint16_t)
MB_DEFINE_CASTS_FROM(s32, int32_t)
MB_DEFINE_CASTS_FROM(u32, uint32_t)

void mb_cast_same_width(const void *input, void *output, int32_t bytes)
{
    /* Between two types of one width (int32 <-> uint32, int8 <-> uint8, ...) the value modulo
     * 2^bits is the same bits: in place there is nothing to do (the audio front ends' uint32 ->
     * int32 -> uint32 casts around a CONCATENATION), elsewhere a copy. */
    if (input != output) {
        memmove(output, input, (size_t)bytes);
    }
}
