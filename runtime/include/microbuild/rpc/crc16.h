/* CRC-16/CCITT-FALSE (polynomial 0x1021, initial value 0xFFFF, no reflection, no final XOR), the
 * checksum of the RPC framing and of a WRITE's header (docs/rpc-protocol.md). "123456789" gives
 * 0x29B1.
 *
 * Incremental: start from MB_CRC16_INIT and feed bytes as they come, so a packet is checked while
 * it streams past without ever being held whole. */
#ifndef MICROBUILD_RPC_CRC16_H
#define MICROBUILD_RPC_CRC16_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MB_CRC16_INIT 0xFFFFu

uint16_t mb_crc16_byte(uint16_t crc, uint8_t byte);
uint16_t mb_crc16_update(uint16_t crc, const void *data, size_t length);
/* The whole CRC of one buffer: mb_crc16_update(MB_CRC16_INIT, data, length). */
uint16_t mb_crc16(const void *data, size_t length);

#ifdef __cplusplus
}
#endif

#endif /* MICROBUILD_RPC_CRC16_H */
