/* Seeded random fuzzing of the frame decoder and the whole RPC server on the fake board, meant
 * to run under ASan and UBSan:
 *
 *     fuzz_test <seed> <decoder bytes> <server bytes>
 *
 * The input mixes random bytes, intact frames and frames with random mutations (bit flips,
 * dropped, duplicated and inserted bytes, truncation, huge lengths). Invariants, besides no
 * sanitizer report: the decoder never delivers a payload whose CRC is wrong and delivers every
 * intact frame exactly; the server never writes outside the arena (guard zone) nor anywhere a
 * request did not aim at (a shadow copy of the pool), its output is always well-formed, READs of
 * known bytes return them, and after all that it still answers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

static uint64_t rng_state;

static uint32_t rnd(void)
{
    /* splitmix64: seedable, tiny, good enough to pick mutations. */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (uint32_t)((z ^ (z >> 31)) >> 32);
}

static uint32_t below(uint32_t n)
{
    return n == 0 ? 0 : rnd() % n;
}

/* Bytes rich in what matters to the framing: FF, FD, FE. */
static uint8_t interesting_byte(void)
{
    switch (below(8)) {
    case 0:
    case 1:
        return 0xFF;
    case 2:
        return 0xFD;
    case 3:
        return 0xFE;
    default:
        return (uint8_t)rnd();
    }
}

#define WIRE_MAX 20000u

/* Applies 1-3 random mutations to a framed packet in place; returns its new length. */
static size_t mutate(uint8_t *wire, size_t n)
{
    const unsigned count = 1 + below(3);
    for (unsigned m = 0; m < count && n > 0; m++) {
        const size_t at = below((uint32_t)n);
        switch (below(7)) {
        case 0: /* bit flip */
            wire[at] ^= (uint8_t)(1u << below(8));
            break;
        case 1: /* drop */
            memmove(wire + at, wire + at + 1, n - at - 1);
            n--;
            break;
        case 2: /* duplicate */
            if (n < WIRE_MAX) {
                memmove(wire + at + 1, wire + at, n - at);
                n++;
            }
            break;
        case 3: /* insert */
            if (n < WIRE_MAX) {
                memmove(wire + at + 1, wire + at, n - at);
                wire[at] = interesting_byte();
                n++;
            }
            break;
        case 4: /* truncate */
            n = at;
            break;
        case 5: /* a huge length (its bytes kept unescaped-safe: no FF) */
            if (n >= 6 && wire[0] == 0xFF && wire[1] == 0xFD && wire[2] != 0xFF && wire[3] != 0xFF &&
                wire[4] != 0xFF && wire[5] != 0xFF) {
                wire[2 + below(4)] = (uint8_t)(0x10 + below(0xE0));
            }
            break;
        default: /* replace */
            wire[at] = interesting_byte();
            break;
        }
    }
    return n;
}

/* ---------------------------------------------------------------- decoder ---- */

static uint8_t encoded[WIRE_MAX];
static size_t captured;

static void capture(const void *data, size_t length)
{
    CHECK(captured + length <= sizeof encoded);
    memcpy(encoded + captured, data, length);
    captured += length;
}

static void fuzz_decoder(unsigned long target)
{
    static uint8_t payload[4096], wire[WIRE_MAX];
    static checked_decoder c;
    checked_init(&c);
    unsigned long fed = 0, intact = 0, mutated = 0, garbage = 0;

    while (fed < target) {
        const uint32_t kind = below(100);
        size_t n;
        if (kind < 20) {
            n = 1 + below(64);
            for (size_t i = 0; i < n; i++) {
                wire[i] = kind < 10 ? (uint8_t)rnd() : interesting_byte();
            }
            garbage++;
            for (size_t i = 0; i < n; i++) {
                checked_feed(&c, wire[i]);
            }
            fed += n;
            continue;
        }
        const uint32_t length = below(10) == 0 ? below(4096) : below(80);
        for (uint32_t i = 0; i < length; i++) {
            payload[i] = interesting_byte();
        }
        n = ref_frame(payload, length, 0, wire);
        if (kind < 60) {
            /* Intact: delivered exactly, unless the stream before it ended in a lone FF, which
             * pairs with the frame's first byte (the sender's no-op resynchronises that). */
            const int expect = !c.decoder.escape;
            const unsigned long before = c.delivered;
            for (size_t i = 0; i < n; i++) {
                const int done = checked_feed(&c, wire[i]);
                CHECK(!done || i == n - 1 || !expect);
            }
            if (expect) {
                CHECK(c.delivered == before + 1);
                CHECK(c.used == length && memcmp(c.payload, payload, length) == 0);
            }
            intact++;
            if (intact % 8 == 0) {
                /* The runtime's encoder gives the same bytes as the reference framer. */
                mb_frame_encoder e;
                mb_frame_encoder_init(&e, capture);
                captured = 0;
                mb_frame_encode_begin(&e, length);
                mb_frame_encode_bytes(&e, payload, length);
                CHECK(mb_frame_encode_end(&e) == 0);
                CHECK(captured == n && memcmp(encoded, wire, n) == 0);
            }
        } else {
            n = mutate(wire, n);
            for (size_t i = 0; i < n; i++) {
                checked_feed(&c, wire[i]);
            }
            mutated++;
        }
        fed += n;
    }
    printf("decoder: bytes=%lu intact=%lu mutated=%lu garbage=%lu delivered=%lu\n", fed, intact, mutated,
           garbage, c.delivered);
}

/* ----------------------------------------------------------------- server ---- */

enum { KNOWN = 0, TOUCHED = 1 };
static uint8_t shadow[FAKE_ARENA_BYTES];
static uint8_t shadow_state[FAKE_ARENA_BYTES];
static device_view view;

/* The last request sent, to match its reply. */
static struct {
    uint16_t seq;
    uint8_t opcode;
    int intact;
    uint32_t offset, length;
    uint8_t data[1200];
} last;
static unsigned long write_ok, read_ok, read_checked_bytes;

static void touch(uint32_t offset, uint32_t length)
{
    for (uint64_t a = offset; a < (uint64_t)offset + length && a < FAKE_ARENA_BYTES; a++) {
        shadow_state[a] = TOUCHED;
    }
}

static void on_reply(const uint8_t *p, uint32_t n)
{
    const uint16_t seq = rd16(&p[4]);
    if (!last.intact || seq != last.seq || p[3] != (last.opcode | 0x80) || p[6] != 0) {
        return;
    }
    if (last.opcode == 4) {
        CHECK(n == 7);
        for (uint32_t i = 0; i < last.length; i++) {
            shadow[last.offset + i] = last.data[i];
            /* The workspaces also change under CALL and RUN: only the pool is tracked. */
            if (last.offset + i >= FAKE_POOL_OFFSET) {
                shadow_state[last.offset + i] = KNOWN;
            }
        }
        write_ok++;
    } else if (last.opcode == 5) {
        CHECK(n == 7 + last.length);
        for (uint32_t i = 0; i < last.length; i++) {
            if (shadow_state[last.offset + i] == KNOWN) {
                CHECK(p[7 + i] == shadow[last.offset + i]);
                read_checked_bytes++;
            }
        }
        read_ok++;
    }
}

static void check_memory(void)
{
    CHECK(fake_guard_ok());
    for (uint32_t a = FAKE_POOL_OFFSET; a < FAKE_ARENA_BYTES; a++) {
        if (shadow_state[a] == KNOWN && mb_rpc_arena[a] != shadow[a]) {
            fprintf(stderr, "arena byte %u changed to %02x (known %02x) after opcode %u seq %u\n", a,
                    mb_rpc_arena[a], shadow[a], last.opcode, last.seq);
            CHECK(0);
        }
    }
}

static unsigned long server_fed;

static void feed_wire(const uint8_t *wire, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        mb_rpc_server_feed(wire[i]);
    }
    server_fed += n;
    device_view_scan(&view, on_reply);
    check_memory();
}

/* Sends a payload framed, intact or mutated; an intact one is preceded by a byte that ends any
 * escape pair a previous mutation left open. */
static void send_payload(const uint8_t *payload, uint32_t length, int intact)
{
    static uint8_t wire[WIRE_MAX];
    size_t n = 0;
    if (intact) {
        wire[n++] = 0x00;
    }
    n += ref_frame(payload, length, 0, wire + n);
    if (!intact) {
        n = mutate(wire, n);
    }
    feed_wire(wire, n);
}

static uint32_t random_offset(void)
{
    switch (below(10)) {
    case 0:
        return rnd(); /* anywhere */
    case 1:
        return FAKE_ARENA_BYTES - below(64);
    case 2:
        return below(FAKE_POOL_OFFSET); /* a workspace */
    default:
        return FAKE_POOL_OFFSET + below(FAKE_ARENA_BYTES - FAKE_POOL_OFFSET);
    }
}

static void open_session(void)
{
    uint8_t start[4] = {1, 0, (uint8_t)(1 + below(255)), 1};
    send_payload(start, 4, 1);
}

static void fuzz_server(unsigned long target)
{
    static uint8_t payload[WIRE_MAX];
    fake_models_init();
    memcpy(shadow, mb_rpc_arena, FAKE_ARENA_BYTES);
    memset(shadow_state, KNOWN, sizeof shadow_state);
    memset(shadow_state, TOUCHED, FAKE_POOL_OFFSET);
    device_view_init(&view);
    mb_rpc_server_init();
    device_view_scan(&view, NULL);
    uint16_t seq = 1;
    unsigned long requests = 0;

    while (server_fed < target) {
        if (view.session == 0 || below(300) == 0) {
            open_session();
        }
        int intact = below(10) < 7;
        uint16_t id = view.session;
        if (below(20) == 0) {
            id = (uint16_t)rnd();
        }
        uint8_t *p = payload;
        *p++ = below(50) == 0 ? (uint8_t)below(8) : 5;
        p = wr(p, id, 2);
        const uint32_t pick = below(100);
        uint8_t opcode;
        memset(&last, 0, sizeof last);
        last.seq = seq;
        last.intact = intact && payload[0] == 5 && id == view.session;
        if (pick < 30) {
            opcode = 4; /* WRITE */
            const uint32_t offset = random_offset();
            const uint32_t length = below(5) == 0 ? below(1200) : below(64);
            *p++ = opcode;
            p = wr(p, seq, 2);
            p = wr(p, offset, 4);
            p = wr(p, below(30) == 0 ? rnd() : length, 4);
            p = wr(p, ref_crc(payload, 14) ^ (below(30) == 0 ? 1u : 0u), 2);
            for (uint32_t i = 0; i < length; i++) {
                last.data[i] = *p++ = interesting_byte();
            }
            last.offset = offset;
            last.length = length;
            touch(offset, length); /* whatever happens, only these bytes may change */
        } else if (pick < 45) {
            opcode = 5; /* READ */
            const uint32_t offset = random_offset();
            const uint32_t length = below(4) == 0 ? below(4096) : below(100);
            *p++ = opcode;
            p = wr(p, seq, 2);
            p = wr(p, offset, 4);
            p = wr(p, length, 4);
            last.offset = offset;
            last.length = length;
        } else if (pick < 55) {
            opcode = 2; /* ALLOC */
            *p++ = opcode;
            p = wr(p, seq, 2);
            p = wr(p, below(8) == 0 ? rnd() : below(600), 4);
            p = wr(p, below(8) == 0 ? rnd() : 1u << below(9), 4);
        } else if (pick < 62) {
            opcode = 3; /* FREE */
            *p++ = opcode;
            p = wr(p, seq, 2);
            p = wr(p, random_offset(), 4);
        } else if (pick < 70) {
            opcode = 6; /* CALL */
            *p++ = opcode;
            p = wr(p, seq, 2);
            p = wr(p, below(7), 2);
        } else if (pick < 76) {
            opcode = 7; /* TIMED_CALL */
            const uint32_t count = below(5);
            *p++ = opcode;
            p = wr(p, seq, 2);
            *p++ = (uint8_t)count;
            for (uint32_t e = 0; e < count; e++) {
                p = wr(p, below(7), 2);
                p = wr(p, below(20), 2);
                p = wr(p, below(70), 2);
            }
        } else if (pick < 81) {
            opcode = 8; /* RUN */
            *p++ = opcode;
            p = wr(p, seq, 2);
            *p++ = (uint8_t)below(3);
        } else if (pick < 85) {
            opcode = 1; /* INFO */
            *p++ = opcode;
            p = wr(p, seq, 2);
            p = wr(p, below(8), 2);
        } else if (pick < 86) {
            opcode = 9; /* RESET */
            *p++ = opcode;
            p = wr(p, seq, 2);
        } else if (pick < 89) {
            opcode = 10; /* RAW_RECEIVE, then its bytes */
            *p++ = opcode;
            p = wr(p, seq, 2);
            p = wr(p, below(64), 4);
        } else if (pick < 91) {
            opcode = 11; /* PACKET_SIZE: later replies must keep within what it agrees */
            *p++ = opcode;
            p = wr(p, seq, 2);
            p = wr(p, below(8) == 0 ? rnd() : below(600), 4);
        } else if (pick < 95) {
            opcode = (uint8_t)rnd(); /* anything */
            if (opcode == 10) {
                opcode = 11; /* a RAW_RECEIVE of a random length would swallow the rest */
            }
            *p++ = opcode;
            p = wr(p, seq, 2);
            const uint32_t extra = below(40);
            for (uint32_t i = 0; i < extra; i++) {
                *p++ = interesting_byte();
            }
        } else {
            /* Plain noise. */
            uint8_t noise[64];
            const uint32_t n = 1 + below(64);
            for (uint32_t i = 0; i < n; i++) {
                noise[i] = interesting_byte();
            }
            feed_wire(noise, n);
            continue;
        }
        last.opcode = opcode;
        if (opcode == 10) {
            /* Never mutated: one corrupted packet in 65536 passes a CRC-16, and a RAW_RECEIVE of
             * a corrupted length would (rightly) swallow the rest of the run. */
            intact = 1;
        }
        if (below(10) == 0) {
            /* The same request again (a retransmission). */
            send_payload(payload, (uint32_t)(p - payload), intact);
        }
        send_payload(payload, (uint32_t)(p - payload), intact);
        if (opcode == 10 && below(2) == 0) {
            uint8_t raw[64];
            for (unsigned i = 0; i < sizeof raw; i++) {
                raw[i] = interesting_byte();
            }
            feed_wire(raw, below(64));
        }
        /* Now and then the next request reuses the seq, except after a WRITE: the server takes a
         * WRITE with the header of the one it just acknowledged for a late copy of it and stores
         * nothing (a host never reuses a seq, and the oracle above would not know that). */
        if (below(8) != 0 || opcode == 4) {
            seq = (uint16_t)(seq == 0xFFFF ? 1 : seq + 1);
        }
        requests++;
    }

    /* Still alive: whatever state the fuzzing left, a clean host gets through. */
    uint8_t zeros[128] = {0};
    feed_wire(zeros, sizeof zeros);
    view.session = 0;
    open_session();
    CHECK(view.session != 0);
    uint8_t info[8] = {5, (uint8_t)view.session, (uint8_t)(view.session >> 8), 1, 0x34, 0x12, 0, 0};
    const unsigned long ok_before = view.replies[0];
    send_payload(info, sizeof info, 1);
    CHECK(view.replies[0] == ok_before + 1);

    printf("server: bytes=%lu requests=%lu packets=%lu ok=%lu bad_message=%lu unknown_opcode=%lu "
           "bad_address=%lu no_memory=%lu bad_function=%lu too_large=%lu writes_ok=%lu reads_ok=%lu "
           "read_bytes_checked=%lu\n",
           server_fed, requests, view.packets, view.replies[0], view.replies[1], view.replies[2], view.replies[3],
           view.replies[4], view.replies[5], view.replies[6], write_ok, read_ok, read_checked_bytes);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s <seed> <decoder bytes> <server bytes>\n", argv[0]);
        return 2;
    }
    rng_state = strtoull(argv[1], NULL, 0);
    fuzz_decoder(strtoul(argv[2], NULL, 0));
    fuzz_server(strtoul(argv[3], NULL, 0));
    puts("fuzz ok");
    return 0;
}
