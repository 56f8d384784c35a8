/* The RPC framing layer (docs/rpc-protocol.md, section 1):
 *
 *     FF FD | esc(length u32 LE) | esc(payload) | esc(crc u16 LE)
 *
 * where esc() sends every FF as FF FF, FF FE is a no-op and FF + anything else is a framing error.
 *
 * The decoder takes one byte at a time and tells the layer above what that byte meant, so payload
 * bytes can go straight to where they belong (a WRITE's data into the arena) without a packet
 * buffer. The encoder sends a packet whose length is known up front byte by byte through a small
 * buffer, so a reply of any size needs only that buffer. Neither calls the platform nor
 * allocates: the caller owns the state structs. */
#ifndef MICROBUILD_RPC_FRAMING_H
#define MICROBUILD_RPC_FRAMING_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MB_FRAME_ESCAPE 0xFFu
#define MB_FRAME_START 0xFDu /* after MB_FRAME_ESCAPE */
#define MB_FRAME_NOOP 0xFEu  /* after MB_FRAME_ESCAPE */

/* What one received byte meant. */
typedef enum {
    MB_FRAME_EV_NONE = 0, /* consumed, nothing to report (a half escape pair, the start, noise) */
    MB_FRAME_EV_NOOP,     /* FF FE, inside or outside a packet: carries nothing */
    MB_FRAME_EV_START,    /* a packet's length was read: it is in decoder.length; its
                             decoder.length payload bytes follow as MB_FRAME_EV_BYTE */
    MB_FRAME_EV_BYTE,     /* one payload byte, in decoder.byte */
    MB_FRAME_EV_END_OK,   /* the packet's CRC matched */
    MB_FRAME_EV_END_BAD,  /* the packet's CRC did not match: drop what it delivered */
    MB_FRAME_EV_ERROR,    /* FF + invalid byte inside a packet: the partial packet is dropped */
    MB_FRAME_EV_RESTART   /* FF FD inside a packet: the partial packet is dropped and a new one
                             begins (its MB_FRAME_EV_START follows once its length is read) */
} mb_frame_event;

typedef struct {
    uint32_t length;       /* the current packet's payload length (valid from MB_FRAME_EV_START) */
    uint32_t remaining;    /* payload bytes still to come */
    uint16_t crc;          /* running CRC over the length and payload */
    uint16_t received_crc; /* the CRC the packet carried (valid at MB_FRAME_EV_END_*) */
    uint8_t state;
    uint8_t escape;        /* the previous byte was an FF still waiting for its partner */
    uint8_t count;         /* bytes of the length or CRC field read so far */
    uint8_t byte;          /* the payload byte of an MB_FRAME_EV_BYTE */
} mb_frame_decoder;

void mb_frame_decoder_init(mb_frame_decoder *decoder);
mb_frame_event mb_frame_decode(mb_frame_decoder *decoder, uint8_t byte);
/* Drops the current packet: everything up to the next FF FD is ignored. For a layer above that
 * already knows it will not use the packet (too long, wrong session). */
void mb_frame_decoder_skip(mb_frame_decoder *decoder);
/* 1 while a packet is being received (between its start and its end), else 0. */
int mb_frame_decoder_in_packet(const mb_frame_decoder *decoder);

/* Sends encoded bytes on; on the device this is mb_console_write itself. */
typedef void (*mb_frame_write_fn)(const void *data, size_t length);

#ifndef MB_FRAME_OUT_BYTES
#define MB_FRAME_OUT_BYTES 32u /* the encoder's output buffer: amortises the write calls */
#endif

typedef struct {
    mb_frame_write_fn write;
    uint32_t remaining; /* payload bytes the current packet still expects */
    uint16_t crc;
    uint8_t used;
    uint8_t mismatch;   /* the caller gave more or fewer bytes than it announced */
    uint8_t buffer[MB_FRAME_OUT_BYTES];
} mb_frame_encoder;

void mb_frame_encoder_init(mb_frame_encoder *encoder, mb_frame_write_fn write);
/* Starts a packet of `length` payload bytes: FF FD and the escaped length. */
void mb_frame_encode_begin(mb_frame_encoder *encoder, uint32_t length);
void mb_frame_encode_byte(mb_frame_encoder *encoder, uint8_t byte);
void mb_frame_encode_bytes(mb_frame_encoder *encoder, const void *data, size_t length);
/* Ends the packet (CRC) and flushes. Returns 0, or -1 if the payload did not have the announced
 * length: the packet was then padded with zeros or cut so the receiver stays in step, and its
 * content is wrong. */
int mb_frame_encode_end(mb_frame_encoder *encoder);
/* Sends FF FE (outside a packet) and flushes. */
void mb_frame_encode_noop(mb_frame_encoder *encoder);
void mb_frame_encoder_flush(mb_frame_encoder *encoder);

#ifdef __cplusplus
}
#endif

#endif /* MICROBUILD_RPC_FRAMING_H */
