/* Shared by the RPC fuzz harnesses (fuzz_test.c, seeded; fuzz_libfuzzer.c, libFuzzer): a checked
 * frame decoder that verifies every event independently, and a reader of the server's console
 * output that fails on anything a correct device could not have sent. */
#ifndef RPC_FUZZ_COMMON_H
#define RPC_FUZZ_COMMON_H

#include <string.h>

#include "fake_platform.h"
#include "microbuild/rpc.h"
#include "microbuild/rpc/framing.h"
#include "test_util.h"

#define CHECKED_KEEP 8192u /* payload bytes a checked decoder keeps of each packet */

/* A frame decoder wrapped with invariants: payload bytes only inside a packet and never more than
 * announced, and every verdict (CRC good or bad) confirmed with the tests' own CRC, so a payload
 * whose CRC is wrong is never delivered. */
typedef struct {
    mb_frame_decoder decoder;
    int open;
    uint32_t used;
    uint16_t crc;
    unsigned long delivered; /* packets delivered with a good CRC */
    unsigned long faults;    /* bad CRCs, framing errors, restarts */
    uint8_t payload[CHECKED_KEEP];
    uint32_t kept;           /* of the last packet, at most CHECKED_KEEP */
} checked_decoder;

static inline void checked_init(checked_decoder *c)
{
    memset(c, 0, sizeof *c);
    mb_frame_decoder_init(&c->decoder);
}

/* Feeds one byte; returns 1 when it completed a packet with a good CRC. */
static inline int checked_feed(checked_decoder *c, uint8_t byte)
{
    switch (mb_frame_decode(&c->decoder, byte)) {
    case MB_FRAME_EV_START: {
        CHECK(!c->open);
        c->open = 1;
        c->used = 0;
        c->kept = 0;
        uint8_t length[4];
        wr(length, c->decoder.length, 4);
        c->crc = 0xFFFFu;
        for (unsigned i = 0; i < 4; i++) {
            c->crc = ref_crc_byte(c->crc, length[i]);
        }
        break;
    }
    case MB_FRAME_EV_BYTE:
        CHECK(c->open && c->used < c->decoder.length);
        c->used++;
        c->crc = ref_crc_byte(c->crc, c->decoder.byte);
        if (c->kept < CHECKED_KEEP) {
            c->payload[c->kept++] = c->decoder.byte;
        }
        break;
    case MB_FRAME_EV_END_OK:
        CHECK(c->open && c->used == c->decoder.length);
        CHECK(c->crc == c->decoder.received_crc);
        c->open = 0;
        c->delivered++;
        return 1;
    case MB_FRAME_EV_END_BAD:
        CHECK(c->open && c->used == c->decoder.length);
        CHECK(c->crc != c->decoder.received_crc);
        c->open = 0;
        c->faults++;
        break;
    case MB_FRAME_EV_ERROR:
    case MB_FRAME_EV_RESTART:
        c->open = 0;
        c->faults++;
        break;
    case MB_FRAME_EV_NONE:
    case MB_FRAME_EV_NOOP:
        break;
    }
    /* A packet is open for the layer above exactly while the decoder is past its length field. */
    CHECK(!c->open || mb_frame_decoder_in_packet(&c->decoder));
    return 0;
}

/* What the device said, as far as the harness cares. */
typedef struct {
    checked_decoder reader;
    size_t read;              /* bytes of fake_output consumed */
    uint16_t session;         /* from the last START_REPLY; 0 after a TERMINATE */
    uint32_t packet;          /* the session's packet size (START_REPLY, PACKET_SIZE) */
    unsigned long replies[7]; /* RPC replies per status */
    unsigned long packets;
} device_view;

static inline void device_view_init(device_view *v)
{
    memset(v, 0, sizeof *v);
    checked_init(&v->reader);
}

/* Decodes everything the device wrote since the last call: the output must be nothing but
 * well-formed packets with good CRCs, each a message the protocol lets a device send.
 * on_reply (may be NULL) sees every RPC reply. */
static inline void device_view_scan(device_view *v, void (*on_reply)(const uint8_t *payload, uint32_t length))
{
    for (; v->read < fake_output_length; v->read++) {
        const int complete = checked_feed(&v->reader, fake_output[v->read]);
        /* The device never sends a broken frame: no bad CRC, framing error or restart. */
        CHECK(v->reader.faults == 0);
        if (!complete) {
            continue;
        }
        const uint8_t *p = v->reader.payload;
        const uint32_t n = v->reader.used;
        CHECK(n == v->reader.kept);
        CHECK(n >= 3);
        v->packets++;
        switch (p[0]) {
        case 2: /* START_REPLY */
            CHECK(n == 8 && p[3] == MB_RPC_PROTOCOL_VERSION && (p[1] != 0) && (p[2] != 0));
            v->session = rd16(&p[1]);
            v->packet = rd32(&p[4]);
            CHECK(v->packet >= 64 && v->packet <= MB_RPC_MAX_PACKET);
            break;
        case 3: /* TERMINATE */
            CHECK(n == 3 && rd16(&p[1]) == 0);
            v->session = 0;
            break;
        case 4: /* LOG */
            CHECK(rd16(&p[1]) == 0);
            break;
        case 5: /* NORMAL: a reply in the current session */
            CHECK(n >= 7 && rd16(&p[1]) == v->session && v->session != 0);
            CHECK((p[3] & 0x80) != 0 && p[6] <= 6);
            CHECK(p[6] == 0 || n > 7); /* an error always says what was wrong */
            CHECK(n <= v->packet); /* no reply longer than the session's packet size */
            if (p[3] == (0x80 | 11) && p[6] == 0) { /* PACKET_SIZE agreed */
                CHECK(n == 11);
                v->packet = rd32(&p[7]);
                CHECK(v->packet >= 64 && v->packet <= MB_RPC_MAX_PACKET);
            }
            v->replies[p[6]]++;
            if (on_reply != NULL) {
                on_reply(p, n);
            }
            break;
        default:
            CHECK(!"the device sent an unknown session type");
        }
    }
    CHECK(!v->reader.open); /* every reply is complete when feed returns */
    v->read = 0;
    fake_output_clear();
}

#endif /* RPC_FUZZ_COMMON_H */
