/* The RPC framing layer: byte-at-a-time decoder and buffered encoder (see
 * microbuild/rpc/framing.h and docs/rpc-protocol.md, section 1). */
#include "microbuild/rpc/framing.h"

#include "microbuild/rpc/crc16.h"

/* An escape pair must fit, and the fill level is a uint8_t. */
#if MB_FRAME_OUT_BYTES < 2 || MB_FRAME_OUT_BYTES > 255
#error "MB_FRAME_OUT_BYTES must be 2..255"
#endif

enum {
    STATE_IDLE = 0, /* outside a packet: waiting for FF FD */
    STATE_LENGTH,
    STATE_PAYLOAD,
    STATE_CRC
};

void mb_frame_decoder_init(mb_frame_decoder *decoder)
{
    decoder->length = 0;
    decoder->remaining = 0;
    decoder->crc = (uint16_t)MB_CRC16_INIT;
    decoder->received_crc = 0;
    decoder->state = STATE_IDLE;
    decoder->escape = 0;
    decoder->count = 0;
    decoder->byte = 0;
}

void mb_frame_decoder_skip(mb_frame_decoder *decoder)
{
    /* The escape flag stays: the skipped packet's remaining bytes must still be read in pairs, or
     * an escaped FF followed by FD (FF FF FD) would be taken for a start. */
    decoder->state = STATE_IDLE;
}

int mb_frame_decoder_in_packet(const mb_frame_decoder *decoder)
{
    return decoder->state != STATE_IDLE;
}

static void begin_packet(mb_frame_decoder *decoder)
{
    decoder->state = STATE_LENGTH;
    decoder->count = 0;
    decoder->length = 0;
    decoder->remaining = 0;
    decoder->received_crc = 0;
    decoder->crc = (uint16_t)MB_CRC16_INIT;
}

/* One unescaped byte of the current packet. */
static mb_frame_event take(mb_frame_decoder *decoder, uint8_t value)
{
    switch (decoder->state) {
    case STATE_LENGTH:
        decoder->crc = mb_crc16_byte(decoder->crc, value);
        decoder->length |= (uint32_t)value << (8u * decoder->count);
        decoder->count++;
        if (decoder->count == 4u) {
            decoder->remaining = decoder->length;
            decoder->count = 0;
            decoder->state = decoder->length == 0u ? STATE_CRC : STATE_PAYLOAD;
            return MB_FRAME_EV_START;
        }
        return MB_FRAME_EV_NONE;
    case STATE_PAYLOAD:
        decoder->crc = mb_crc16_byte(decoder->crc, value);
        decoder->byte = value;
        decoder->remaining--;
        if (decoder->remaining == 0u) {
            decoder->state = STATE_CRC;
        }
        return MB_FRAME_EV_BYTE;
    case STATE_CRC:
        decoder->received_crc |= (uint16_t)((unsigned)value << (8u * decoder->count));
        decoder->count++;
        if (decoder->count == 2u) {
            decoder->state = STATE_IDLE;
            return decoder->received_crc == decoder->crc ? MB_FRAME_EV_END_OK : MB_FRAME_EV_END_BAD;
        }
        return MB_FRAME_EV_NONE;
    default:
        return MB_FRAME_EV_NONE; /* noise between packets */
    }
}

mb_frame_event mb_frame_decode(mb_frame_decoder *decoder, uint8_t byte)
{
    if (!decoder->escape) {
        if (byte == MB_FRAME_ESCAPE) {
            decoder->escape = 1;
            return MB_FRAME_EV_NONE;
        }
        return take(decoder, byte);
    }

    decoder->escape = 0;
    switch (byte) {
    case MB_FRAME_ESCAPE:
        return take(decoder, (uint8_t)MB_FRAME_ESCAPE);
    case MB_FRAME_START: {
        const int was_in_packet = decoder->state != STATE_IDLE;
        begin_packet(decoder);
        return was_in_packet ? MB_FRAME_EV_RESTART : MB_FRAME_EV_NONE;
    }
    case MB_FRAME_NOOP:
        return MB_FRAME_EV_NOOP;
    default:
        if (decoder->state != STATE_IDLE) {
            decoder->state = STATE_IDLE;
            return MB_FRAME_EV_ERROR;
        }
        return MB_FRAME_EV_NONE; /* no partial packet to drop */
    }
}

void mb_frame_encoder_init(mb_frame_encoder *encoder, mb_frame_write_fn write)
{
    encoder->write = write;
    encoder->remaining = 0;
    encoder->crc = (uint16_t)MB_CRC16_INIT;
    encoder->used = 0;
    encoder->mismatch = 0;
}

void mb_frame_encoder_flush(mb_frame_encoder *encoder)
{
    if (encoder->used > 0u) {
        encoder->write(encoder->buffer, encoder->used);
        encoder->used = 0;
    }
}

/* Room for a whole escape pair, so a pair is never split across two writes (harmless on the wire,
 * but it keeps each write a well-formed piece for anyone watching the calls). */
static void put_raw(mb_frame_encoder *encoder, uint8_t first, uint8_t second, int pair)
{
    if ((size_t)encoder->used + 2u > sizeof encoder->buffer) {
        mb_frame_encoder_flush(encoder);
    }
    encoder->buffer[encoder->used++] = first;
    if (pair) {
        encoder->buffer[encoder->used++] = second;
    }
}

static void put_escaped(mb_frame_encoder *encoder, uint8_t value)
{
    encoder->crc = mb_crc16_byte(encoder->crc, value);
    put_raw(encoder, value, value, value == MB_FRAME_ESCAPE);
}

void mb_frame_encode_begin(mb_frame_encoder *encoder, uint32_t length)
{
    encoder->crc = (uint16_t)MB_CRC16_INIT;
    encoder->remaining = length;
    encoder->mismatch = 0;
    put_raw(encoder, (uint8_t)MB_FRAME_ESCAPE, (uint8_t)MB_FRAME_START, 1);
    for (unsigned i = 0; i < 4u; i++) {
        put_escaped(encoder, (uint8_t)(length >> (8u * i)));
    }
}

void mb_frame_encode_byte(mb_frame_encoder *encoder, uint8_t byte)
{
    if (encoder->remaining == 0u) {
        encoder->mismatch = 1;
        return;
    }
    encoder->remaining--;
    put_escaped(encoder, byte);
}

void mb_frame_encode_bytes(mb_frame_encoder *encoder, const void *data, size_t length)
{
    const uint8_t *bytes = (const uint8_t *)data;
    for (size_t i = 0; i < length; i++) {
        mb_frame_encode_byte(encoder, bytes[i]);
    }
}

int mb_frame_encode_end(mb_frame_encoder *encoder)
{
    if (encoder->remaining > 0u) {
        encoder->mismatch = 1;
        while (encoder->remaining > 0u) {
            encoder->remaining--;
            put_escaped(encoder, 0);
        }
    }
    const uint16_t crc = encoder->crc;
    put_escaped(encoder, (uint8_t)(crc & 0xFFu));
    put_escaped(encoder, (uint8_t)(crc >> 8));
    mb_frame_encoder_flush(encoder);
    return encoder->mismatch ? -1 : 0;
}

void mb_frame_encode_noop(mb_frame_encoder *encoder)
{
    put_raw(encoder, (uint8_t)MB_FRAME_ESCAPE, (uint8_t)MB_FRAME_NOOP, 1);
    mb_frame_encoder_flush(encoder);
}
