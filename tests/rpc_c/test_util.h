/* Shared by the RPC C test programs: a check macro, little-endian helpers, and a reference CRC and
 * framer written independently of runtime/rpc/ (bit by bit, straight from the protocol text), so
 * the tests never check the runtime against itself. */
#ifndef RPC_TEST_UTIL_H
#define RPC_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(condition)                                                                       \
    do {                                                                                       \
        if (!(condition)) {                                                                    \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition);    \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

static inline uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline uint64_t rd64(const uint8_t *p)
{
    return (uint64_t)rd32(p) | ((uint64_t)rd32(p + 4) << 32);
}

static inline uint8_t *wr(uint8_t *p, uint64_t value, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++) {
        *p++ = (uint8_t)(value >> (8u * i));
    }
    return p;
}

static inline uint16_t ref_crc_byte(uint16_t crc, uint8_t byte)
{
    crc ^= (uint16_t)(byte << 8);
    for (int bit = 0; bit < 8; bit++) {
        crc = (crc & 0x8000u) ? (uint16_t)((crc << 1) ^ 0x1021u) : (uint16_t)(crc << 1);
    }
    return crc;
}

static inline uint16_t ref_crc(const uint8_t *data, size_t length)
{
    uint16_t crc = 0xFFFFu;
    for (size_t i = 0; i < length; i++) {
        crc = ref_crc_byte(crc, data[i]);
    }
    return crc;
}

static inline size_t ref_escape(uint8_t *out, uint8_t byte)
{
    out[0] = byte;
    if (byte == 0xFFu) {
        out[1] = 0xFFu;
        return 2;
    }
    return 1;
}

/* Frames `payload` into `out` (room for 2 * length + 14 bytes); the CRC is XORed with crc_xor,
 * so a test can send a packet whose CRC is wrong. Returns the wire length. */
static inline size_t ref_frame(const uint8_t *payload, uint32_t length, uint16_t crc_xor, uint8_t *out)
{
    size_t n = 0;
    uint16_t crc = 0xFFFFu;
    out[n++] = 0xFFu;
    out[n++] = 0xFDu;
    for (unsigned i = 0; i < 4u; i++) {
        const uint8_t byte = (uint8_t)(length >> (8u * i));
        crc = ref_crc_byte(crc, byte);
        n += ref_escape(out + n, byte);
    }
    for (uint32_t i = 0; i < length; i++) {
        crc = ref_crc_byte(crc, payload[i]);
        n += ref_escape(out + n, payload[i]);
    }
    crc ^= crc_xor;
    n += ref_escape(out + n, (uint8_t)(crc & 0xFFu));
    n += ref_escape(out + n, (uint8_t)(crc >> 8));
    return n;
}

#endif /* RPC_TEST_UTIL_H */
