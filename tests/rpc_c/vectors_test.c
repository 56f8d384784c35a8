/* Checks runtime/rpc/crc16.c and framing.c against the protocol's byte vectors
 * (docs/rpc-vectors.json), which test_rpc_c.py turns into whitespace-separated records on stdin
 * ("-" is an empty hex string):
 *
 *     crc16 <data hex> <crc>
 *     frame <payload hex> <wire hex>
 *     stream <wire hex> <payload count> <payload hex>...
 *     header <14-byte header hex> <crc>
 *
 * Prints the number of records of each kind checked; exits 1 at the first mismatch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "microbuild/rpc/crc16.h"
#include "microbuild/rpc/framing.h"
#include "test_util.h"

typedef struct {
    uint8_t *data;
    size_t length;
} bytes;

static char *token(void)
{
    static char *text;
    static size_t capacity;
    size_t length = 0;
    int c;
    do {
        c = getchar();
    } while (c == ' ' || c == '\n' || c == '\r' || c == '\t');
    if (c == EOF) {
        return NULL;
    }
    while (c != EOF && c != ' ' && c != '\n' && c != '\r' && c != '\t') {
        if (length + 2 > capacity) {
            capacity = capacity * 2 + 64;
            text = realloc(text, capacity);
            CHECK(text != NULL);
        }
        text[length++] = (char)c;
        c = getchar();
    }
    text[length] = '\0';
    return text;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    fprintf(stderr, "bad hex digit '%c'\n", c);
    exit(1);
}

static bytes hex_token(void)
{
    const char *text = token();
    CHECK(text != NULL);
    bytes out = {NULL, 0};
    if (strcmp(text, "-") == 0) {
        out.data = malloc(1);
        CHECK(out.data != NULL);
        return out;
    }
    const size_t length = strlen(text);
    CHECK(length % 2 == 0);
    out.length = length / 2;
    out.data = malloc(out.length + 1);
    CHECK(out.data != NULL);
    for (size_t i = 0; i < out.length; i++) {
        out.data[i] = (uint8_t)(hex_digit(text[2 * i]) << 4 | hex_digit(text[2 * i + 1]));
    }
    return out;
}

static unsigned long number_token(void)
{
    const char *text = token();
    CHECK(text != NULL);
    char *end;
    const unsigned long value = strtoul(text, &end, 10);
    CHECK(*end == '\0');
    return value;
}

static void dump(const char *what, const uint8_t *data, size_t length)
{
    fprintf(stderr, "%s:", what);
    for (size_t i = 0; i < length; i++) {
        fprintf(stderr, " %02x", data[i]);
    }
    fputc('\n', stderr);
}

static uint8_t *encoded;
static size_t encoded_length, encoded_capacity;
static size_t write_calls;

static void capture(const void *data, size_t length)
{
    if (encoded_length + length > encoded_capacity) {
        encoded_capacity = (encoded_length + length) * 2;
        encoded = realloc(encoded, encoded_capacity);
        CHECK(encoded != NULL);
    }
    memcpy(encoded + encoded_length, data, length);
    encoded_length += length;
    write_calls++;
}

/* Feeds `wire` to a fresh decoder; returns the packets it delivered with a good CRC, each
 * checked against an independent CRC of what was delivered. */
static size_t decode(const bytes *wire, bytes *packets, size_t capacity)
{
    mb_frame_decoder decoder;
    mb_frame_decoder_init(&decoder);
    size_t count = 0;
    uint8_t *current = NULL;
    size_t used = 0, capacity_now = 0;
    int open = 0;
    for (size_t i = 0; i < wire->length; i++) {
        switch (mb_frame_decode(&decoder, wire->data[i])) {
        case MB_FRAME_EV_START:
            /* A length beyond the rest of the wire (a "huge length" vector) can never complete. */
            free(current);
            capacity_now = decoder.length < wire->length ? decoder.length : wire->length;
            current = malloc(capacity_now + 1u);
            CHECK(current != NULL);
            used = 0;
            open = 1;
            break;
        case MB_FRAME_EV_BYTE:
            CHECK(open && used < decoder.length && used < capacity_now);
            current[used++] = decoder.byte;
            break;
        case MB_FRAME_EV_END_OK: {
            CHECK(open && used == decoder.length);
            uint8_t header[4];
            wr(header, decoder.length, 4);
            uint16_t crc = 0xFFFFu;
            for (unsigned k = 0; k < 4; k++) {
                crc = ref_crc_byte(crc, header[k]);
            }
            for (size_t k = 0; k < used; k++) {
                crc = ref_crc_byte(crc, current[k]);
            }
            CHECK(crc == decoder.received_crc);
            CHECK(count < capacity);
            packets[count].data = current;
            packets[count].length = used;
            count++;
            current = NULL;
            open = 0;
            break;
        }
        case MB_FRAME_EV_END_BAD:
        case MB_FRAME_EV_ERROR:
        case MB_FRAME_EV_RESTART:
            open = 0;
            break;
        case MB_FRAME_EV_NONE:
        case MB_FRAME_EV_NOOP:
            break;
        }
    }
    free(current);
    return count;
}

static void check_crc16(void)
{
    bytes data = hex_token();
    const unsigned long crc = number_token();
    if (mb_crc16(data.data, data.length) != crc) {
        dump("crc16 data", data.data, data.length);
        fprintf(stderr, "crc16: got 0x%04x, want 0x%04lx\n", mb_crc16(data.data, data.length), crc);
        exit(1);
    }
    /* Incrementally, in uneven pieces, from the documented initial value. */
    uint16_t running = (uint16_t)MB_CRC16_INIT;
    size_t at = 0;
    for (size_t piece = 1; at < data.length; piece++) {
        const size_t n = piece < data.length - at ? piece : data.length - at;
        running = mb_crc16_update(running, data.data + at, n);
        at += n;
    }
    CHECK(running == crc);
    CHECK(ref_crc(data.data, data.length) == crc); /* the tests' own CRC agrees too */
    free(data.data);
}

static void check_frame(void)
{
    bytes payload = hex_token();
    bytes wire = hex_token();
    mb_frame_encoder encoder;
    mb_frame_encoder_init(&encoder, capture);
    encoded_length = 0;
    write_calls = 0;
    mb_frame_encode_begin(&encoder, (uint32_t)payload.length);
    /* Byte by byte for the first half, as one block for the rest: both paths give one stream. */
    const size_t half = payload.length / 2;
    for (size_t i = 0; i < half; i++) {
        mb_frame_encode_byte(&encoder, payload.data[i]);
    }
    mb_frame_encode_bytes(&encoder, payload.data + half, payload.length - half);
    CHECK(mb_frame_encode_end(&encoder) == 0);
    if (encoded_length != wire.length || memcmp(encoded, wire.data, wire.length) != 0) {
        dump("payload", payload.data, payload.length);
        dump("encoded", encoded, encoded_length);
        dump("wanted ", wire.data, wire.length);
        exit(1);
    }
    /* The small output buffer is flushed as it fills, not only at the end. */
    CHECK(write_calls >= (wire.length + MB_FRAME_OUT_BYTES - 1) / MB_FRAME_OUT_BYTES);

    bytes packet;
    CHECK(decode(&wire, &packet, 1) == 1);
    CHECK(packet.length == payload.length && memcmp(packet.data, payload.data, payload.length) == 0);
    free(packet.data);
    free(payload.data);
    free(wire.data);
}

static void check_stream(void)
{
    bytes wire = hex_token();
    const unsigned long count = number_token();
    bytes *wanted = calloc(count + 1, sizeof *wanted);
    bytes *got = calloc(count + 1, sizeof *got);
    CHECK(wanted != NULL && got != NULL);
    for (unsigned long i = 0; i < count; i++) {
        wanted[i] = hex_token();
    }
    const size_t delivered = decode(&wire, got, count + 1);
    if (delivered != count) {
        dump("stream", wire.data, wire.length);
        fprintf(stderr, "delivered %zu packets, want %lu\n", delivered, count);
        exit(1);
    }
    for (unsigned long i = 0; i < count; i++) {
        if (got[i].length != wanted[i].length || memcmp(got[i].data, wanted[i].data, got[i].length) != 0) {
            dump("stream", wire.data, wire.length);
            dump("got   ", got[i].data, got[i].length);
            dump("wanted", wanted[i].data, wanted[i].length);
            exit(1);
        }
        free(got[i].data);
        free(wanted[i].data);
    }
    free(got);
    free(wanted);
    free(wire.data);
}

static void check_header(void)
{
    bytes header = hex_token();
    const unsigned long crc = number_token();
    CHECK(header.length == 14);
    if (mb_crc16(header.data, header.length) != crc) {
        dump("write header", header.data, header.length);
        fprintf(stderr, "header crc: got 0x%04x, want 0x%04lx\n", mb_crc16(header.data, header.length), crc);
        exit(1);
    }
    free(header.data);
}

/* Not in the vectors: an encoder given fewer or more bytes than it announced reports it and still
 * sends a frame of the announced length, so the receiver stays in step. */
static void check_encoder_mismatch(void)
{
    const uint8_t two[] = {0xFF, 0x01};
    const uint8_t padded[] = {0xFF, 0x01, 0x00};
    uint8_t want[32];
    mb_frame_encoder encoder;
    mb_frame_encoder_init(&encoder, capture);

    encoded_length = 0;
    mb_frame_encode_begin(&encoder, 3);
    mb_frame_encode_bytes(&encoder, two, 2);
    CHECK(mb_frame_encode_end(&encoder) == -1);
    size_t n = ref_frame(padded, 3, 0, want);
    CHECK(encoded_length == n && memcmp(encoded, want, n) == 0);

    encoded_length = 0;
    mb_frame_encode_begin(&encoder, 1);
    mb_frame_encode_bytes(&encoder, two, 2);
    CHECK(mb_frame_encode_end(&encoder) == -1);
    n = ref_frame(two, 1, 0, want);
    CHECK(encoded_length == n && memcmp(encoded, want, n) == 0);

    /* The next packet is clean again. */
    encoded_length = 0;
    mb_frame_encode_begin(&encoder, 2);
    mb_frame_encode_bytes(&encoder, two, 2);
    CHECK(mb_frame_encode_end(&encoder) == 0);
    n = ref_frame(two, 2, 0, want);
    CHECK(encoded_length == n && memcmp(encoded, want, n) == 0);

    encoded_length = 0;
    mb_frame_encode_noop(&encoder);
    CHECK(encoded_length == 2 && encoded[0] == 0xFF && encoded[1] == 0xFE);
}

int main(void)
{
    unsigned long crcs = 0, frames = 0, streams = 0, headers = 0;
    check_encoder_mismatch();
    const char *kind;
    while ((kind = token()) != NULL) {
        if (strcmp(kind, "crc16") == 0) {
            check_crc16();
            crcs++;
        } else if (strcmp(kind, "frame") == 0) {
            check_frame();
            frames++;
        } else if (strcmp(kind, "stream") == 0) {
            check_stream();
            streams++;
        } else if (strcmp(kind, "header") == 0) {
            check_header();
            headers++;
        } else {
            fprintf(stderr, "unknown record '%s'\n", kind);
            return 1;
        }
    }
    free(encoded);
    printf("vectors ok: crc16 %lu frames %lu streams %lu write_headers %lu\n", crcs, frames, streams, headers);
    return 0;
}
