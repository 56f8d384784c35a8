/* CRC-16/CCITT-FALSE for the RPC protocol (see microbuild/rpc/crc16.h). */
#include "microbuild/rpc/crc16.h"

uint16_t mb_crc16_byte(uint16_t crc, uint8_t byte)
{
    /* The table-free form of the byte step: a few shifts instead of 8 bit iterations or a 512-byte
     * table, which matters on the smallest boards where every received byte goes through here. */
    uint16_t x = (uint16_t)((crc >> 8) ^ byte);
    x ^= (uint16_t)(x >> 4);
    return (uint16_t)((crc << 8) ^ (x << 12) ^ (x << 5) ^ x);
}

uint16_t mb_crc16_update(uint16_t crc, const void *data, size_t length)
{
    const uint8_t *bytes = (const uint8_t *)data;
    for (size_t i = 0; i < length; i++) {
        crc = mb_crc16_byte(crc, bytes[i]);
    }
    return crc;
}

uint16_t mb_crc16(const void *data, size_t length)
{
    return mb_crc16_update((uint16_t)MB_CRC16_INIT, data, length);
}
