/* A scripted session against the RPC server (runtime/rpc/server.c) on the fake board: every
 * request type, its errors, the reply cache, stale and missing sessions, RESET. Requests are
 * framed with the test's own reference framer; replies are decoded from the captured console
 * output. Exits 0 and prints "server ok" when every check passed. Built with the default
 * MB_RPC_MAX_PACKET and with a small one, so INFO, READ and WRITE must stream past it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_platform.h"
#include "microbuild/rpc.h"
#include "microbuild/rpc/framing.h"
#include "test_util.h"

#define MAX ((uint32_t)(MB_RPC_MAX_PACKET))
#define BIG (1u << 16)

enum { START_INIT = 1, START_REPLY = 2, TERMINATE = 3, LOG = 4, NORMAL = 5 };
enum { INFO = 1, ALLOC, FREE, WRITE, READ, CALL, TIMED_CALL, RUN, RESET, RAW_RECEIVE, PACKET_SIZE };
enum { OK = 0, BAD_MESSAGE, UNKNOWN_OPCODE, BAD_ADDRESS, NO_MEMORY, BAD_FUNCTION, TOO_LARGE };

static uint16_t session;
static uint16_t next_seq = 1;
static uint32_t limit = MAX; /* the session's packet size: no reply may be longer */

static size_t output_read; /* how much of fake_output the test has decoded */
static mb_frame_decoder output_decoder;

static uint8_t packet[BIG]; /* the last reply packet's payload */
static uint32_t packet_length;

static void feed(const uint8_t *bytes, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        mb_rpc_server_feed(bytes[i]);
    }
}

static void send_raw_payload(const uint8_t *payload, uint32_t length, uint16_t crc_xor)
{
    static uint8_t wire[2u * BIG + 16u];
    CHECK(length <= BIG);
    feed(wire, ref_frame(payload, length, crc_xor, wire));
}

/* The next complete packet the device sent: 1, or 0 when its output holds no more. Any framing
 * fault in the device's output fails the test. */
static int next_packet(void)
{
    uint32_t used = 0;
    while (output_read < fake_output_length) {
        switch (mb_frame_decode(&output_decoder, fake_output[output_read++])) {
        case MB_FRAME_EV_START:
            used = 0;
            CHECK(output_decoder.length <= BIG);
            break;
        case MB_FRAME_EV_BYTE:
            packet[used++] = output_decoder.byte;
            break;
        case MB_FRAME_EV_END_OK:
            packet_length = used;
            return 1;
        case MB_FRAME_EV_END_BAD:
        case MB_FRAME_EV_ERROR:
        case MB_FRAME_EV_RESTART:
            CHECK(!"the device sent a broken packet");
            break;
        case MB_FRAME_EV_NONE:
        case MB_FRAME_EV_NOOP:
            break;
        }
    }
    CHECK(!mb_frame_decoder_in_packet(&output_decoder));
    return 0;
}

static void expect_silence(void)
{
    CHECK(output_read == fake_output_length);
}

static void expect_terminate(void)
{
    CHECK(next_packet());
    CHECK(packet_length == 3 && packet[0] == TERMINATE && rd16(&packet[1]) == 0);
}

/* The whole boot sequence: FF FE, TERMINATE, LOG. */
static void expect_boot(void)
{
    CHECK(fake_output_length - output_read >= 2);
    CHECK(fake_output[output_read] == 0xFF && fake_output[output_read + 1] == 0xFE);
    expect_terminate();
    CHECK(next_packet());
    CHECK(packet[0] == LOG && rd16(&packet[1]) == 0);
    char expected[128];
    snprintf(expected, sizeof expected,
             "microbuild rpc: board test-board, build 0102030405060708, max packet %u", (unsigned)MAX);
    CHECK(packet_length == 3 + strlen(expected));
    CHECK(memcmp(&packet[3], expected, strlen(expected)) == 0);
    expect_silence();
}

/* Opens a session proposing a packet size (0: the device's largest); returns the size agreed. */
static uint32_t open_session_with(uint8_t host_nonce, uint32_t proposed)
{
    uint8_t start[8] = {START_INIT, 0x00, host_nonce, MB_RPC_PROTOCOL_VERSION};
    wr(&start[4], proposed, 4);
    send_raw_payload(start, sizeof start, 0);
    CHECK(next_packet());
    CHECK(packet_length == 8 && packet[0] == START_REPLY && packet[3] == MB_RPC_PROTOCOL_VERSION);
    const uint16_t id = rd16(&packet[1]);
    CHECK((id >> 8) == host_nonce);
    CHECK((id & 0xFF) != 0);
    session = id;
    limit = rd32(&packet[4]);
    CHECK(limit >= 64 && limit <= MAX);
    expect_silence();
    return limit;
}

static void open_session(uint8_t host_nonce)
{
    CHECK(open_session_with(host_nonce, 0) == MAX);
}

/* Sends one request in the current session (or `id`), returns its seq. */
static uint16_t send_request_as(uint16_t id, uint8_t opcode, uint16_t seq, const uint8_t *args, uint32_t argn)
{
    static uint8_t payload[BIG];
    uint8_t *p = payload;
    *p++ = NORMAL;
    p = wr(p, id, 2);
    *p++ = opcode;
    p = wr(p, seq, 2);
    if (argn > 0) {
        memcpy(p, args, argn);
    }
    send_raw_payload(payload, 6 + argn, 0);
    return seq;
}

static uint16_t send_request(uint8_t opcode, const uint8_t *args, uint32_t argn)
{
    return send_request_as(session, opcode, next_seq++, args, argn);
}

/* The next packet is the reply to (opcode, seq) with `status`; returns its result bytes. */
static const uint8_t *expect_reply(uint8_t opcode, uint16_t seq, uint8_t status, uint32_t *result_length)
{
    CHECK(next_packet());
    CHECK(packet_length >= 7);
    CHECK(packet[0] == NORMAL && rd16(&packet[1]) == session);
    CHECK(packet[3] == (opcode | 0x80) && rd16(&packet[4]) == seq);
    CHECK(packet_length <= limit); /* every reply within the session's packet size */
    if (packet[6] != status) {
        fprintf(stderr, "opcode %u seq %u: status %u, wanted %u: %.*s\n", opcode, seq, packet[6], status,
                (int)(packet_length - 7), (const char *)&packet[7]);
    }
    CHECK(packet[6] == status);
    *result_length = packet_length - 7;
    return &packet[7];
}

/* The next packet is an error reply whose message contains `text`. */
static void expect_error(uint8_t opcode, uint16_t seq, uint8_t status, const char *text)
{
    uint32_t n;
    const uint8_t *message = expect_reply(opcode, seq, status, &n);
    char copy[600];
    CHECK(n > 0 && n < sizeof copy);
    memcpy(copy, message, n);
    copy[n] = '\0';
    /* A message filling the whole packet was cut: then the text may run past its end. */
    int found = strstr(copy, text) != NULL;
    for (size_t k = strlen(text) < n ? strlen(text) : n; !found && n == limit - 7 && k >= 8; k--) {
        found = memcmp(copy + n - k, text, k) == 0;
    }
    if (!found) {
        fprintf(stderr, "message \"%s\" lacks \"%s\"\n", copy, text);
        CHECK(0);
    }
    expect_silence();
}

static uint32_t call_ok(uint8_t opcode, const uint8_t *args, uint32_t argn, uint8_t *result, uint32_t capacity)
{
    const uint16_t seq = send_request(opcode, args, argn);
    uint32_t n;
    const uint8_t *r = expect_reply(opcode, seq, OK, &n);
    CHECK(n <= capacity);
    if (n > 0) {
        memcpy(result, r, n);
    }
    expect_silence();
    return n;
}

static uint32_t alloc(uint32_t bytes, uint32_t align)
{
    uint8_t args[8], result[4];
    wr(wr(args, bytes, 4), align, 4);
    CHECK(call_ok(ALLOC, args, 8, result, 4) == 4);
    return rd32(result);
}

static void free_ok(uint32_t offset)
{
    uint8_t args[4];
    wr(args, offset, 4);
    CHECK(call_ok(FREE, args, 4, NULL, 0) == 0);
}

/* A WRITE payload; header_crc_xor corrupts the header CRC. Returns its length. */
static uint32_t build_write(uint8_t *payload, uint16_t id, uint16_t seq, uint32_t offset, uint32_t length,
                            const uint8_t *data, uint32_t data_bytes, uint16_t header_crc_xor)
{
    uint8_t *p = payload;
    *p++ = NORMAL;
    p = wr(p, id, 2);
    *p++ = WRITE;
    p = wr(p, seq, 2);
    p = wr(p, offset, 4);
    p = wr(p, length, 4);
    p = wr(p, (uint16_t)(ref_crc(payload, 14) ^ header_crc_xor), 2);
    memcpy(p, data, data_bytes);
    return 16 + data_bytes;
}

static void write_ok(uint32_t offset, const uint8_t *data, uint32_t length)
{
    static uint8_t payload[BIG];
    const uint16_t seq = next_seq++;
    send_raw_payload(payload, build_write(payload, session, seq, offset, length, data, length, 0), 0);
    uint32_t n;
    expect_reply(WRITE, seq, OK, &n);
    CHECK(n == 0);
    expect_silence();
}

/* In READs of at most what one reply at the packet size holds. */
static void read_ok(uint32_t offset, uint32_t length, uint8_t *out)
{
    uint32_t done = 0;
    do {
        const uint32_t n = length - done < limit - 7 ? length - done : limit - 7;
        uint8_t args[8];
        wr(wr(args, offset + done, 4), n, 4);
        CHECK(call_ok(READ, args, 8, out + done, n) == n);
        done += n;
    } while (done < length);
}

static void test_boot_and_session(void)
{
    expect_boot();

    /* No session yet: a NORMAL request learns the device reset. */
    send_request_as(0x1234, INFO, 1, (const uint8_t *)"\0\0", 2);
    expect_terminate();
    expect_silence();

    /* Malformed START_INITs are ignored: nonce 0, a low byte set. */
    const uint8_t zero_nonce[] = {START_INIT, 0x00, 0x00, 1};
    const uint8_t low_byte[] = {START_INIT, 0x01, 0x42, 1};
    send_raw_payload(zero_nonce, 4, 0);
    send_raw_payload(low_byte, 4, 0);
    expect_silence();

    open_session(0x42);
}

/* One page of INFO's table, starting at item `first`; returns the reply length. */
static uint32_t info_page(uint16_t first, uint8_t *info, uint32_t capacity)
{
    uint8_t args[2];
    wr(args, first, 2);
    return call_ok(INFO, args, 2, info, capacity);
}

/* Pages through INFO at the current packet size, checking every item; returns the page count. */
static unsigned read_info(void)
{
    static const struct {
        uint8_t kind, model;
        uint16_t op;
        const char *name;
    } functions[] = {{0, 0, 0, "m0"}, {1, 0, 0, "m0.0.ADD"}, {1, 0, 1, "m0.1.ADD"}, {0, 1, 0, "m1"}, {1, 1, 0, "m1.0.INC"}};
    static const struct {
        const char *name;
        uint32_t offset, bytes;
    } models[] = {{"m0", 0, 64}, {"m1", 64, 32}};
    enum { MODELS = 2, FUNCTIONS = 5, ITEMS = 1 + MODELS + FUNCTIONS };
    static uint8_t info[BIG];
    unsigned item = 0, pages = 0;
    while (item < ITEMS) {
        const uint32_t n = info_page((uint16_t)item, info, sizeof info);
        pages++;
        const uint8_t *p = info;
        CHECK(rd16(p) == ITEMS);
        CHECK(rd16(p + 2) == item);
        p += 4;
        const unsigned page_first = item;
        while ((uint32_t)(p - info) < n) {
            CHECK(item < ITEMS);
            if (item == 0) { /* the device record */
                CHECK(*p++ == MB_RPC_PROTOCOL_VERSION);
                CHECK(rd32(p) == MAX);
                p += 4;
                CHECK(rd32(p) == FAKE_ARENA_BYTES);
                p += 4;
                CHECK(rd64(p) == 1000000u);
                p += 8;
                for (unsigned i = 0; i < 8; i++) {
                    CHECK(*p++ == i + 1);
                }
                CHECK(*p == 10 && memcmp(p + 1, "test-board", 10) == 0);
                p += 11;
                CHECK(*p++ == MODELS);
                CHECK(rd16(p) == FUNCTIONS);
                p += 2;
            } else if (item <= MODELS) {
                const unsigned m = item - 1;
                const size_t name = strlen(models[m].name);
                CHECK(p[0] == name && memcmp(p + 1, models[m].name, name) == 0);
                p += 1 + name;
                CHECK(rd32(p) == models[m].offset && rd32(p + 4) == models[m].bytes);
                p += 8;
            } else {
                const unsigned f = item - 1 - MODELS;
                CHECK(p[0] == functions[f].kind && p[1] == functions[f].model && rd16(p + 2) == functions[f].op);
                CHECK(p[4] == 1 && p[5] == 1);
                const size_t name = strlen(functions[f].name);
                CHECK(p[6] == name && memcmp(p + 7, functions[f].name, name) == 0);
                p += 7 + name;
            }
            item++;
        }
        CHECK((uint32_t)(p - info) == n);
        CHECK(item > page_first); /* every page lists at least one item */
    }
    return pages;
}

static void test_info(void)
{
    const unsigned pages = read_info();
    if (MAX < 100) {
        CHECK(pages > 2); /* the small build really paged */
    } else {
        CHECK(pages == 1);
    }
    /* Past the end: an empty page. */
    uint8_t info[16];
    CHECK(info_page(99, info, sizeof info) == 4);
    CHECK(rd16(info) == 8 && rd16(info + 2) == 8);

    const uint8_t extra[] = {0};
    const uint16_t seq = send_request(INFO, extra, 1);
    expect_error(INFO, seq, BAD_MESSAGE, "INFO takes 2 bytes of arguments, got 1");
}

/* PACKET_SIZE: returns the size the device agreed to. */
static uint32_t packet_size(uint32_t proposed)
{
    uint8_t args[4], result[4];
    wr(args, proposed, 4);
    CHECK(call_ok(PACKET_SIZE, args, 4, result, 4) == 4);
    limit = rd32(result);
    return limit;
}

/* The packet size bounds every reply: INFO pages, READ, TIMED_CALL, error messages. */
static void test_packet_size(void)
{
    CHECK(packet_size(0) == MAX);
    CHECK(packet_size(MAX + 1000) == MAX);
    /* Below the smallest (64; the fake models' longest INFO item needs less): raised to it. */
    CHECK(packet_size(1) == 64);
    CHECK(packet_size(64) == 64);
    CHECK(read_info() >= (MAX < 100 ? 3u : 2u));

    uint8_t args[8], data[128];
    wr(wr(args, 0, 4), 64 - 7 + 1, 4);
    uint16_t seq = send_request(READ, args, 8);
    expect_error(READ, seq, TOO_LARGE, "a READ of 58 bytes exceeds the packet size (64 bytes, 57 of data)");
    read_ok(0, 57, data); /* exactly one reply of 64 bytes */
    CHECK(packet_length == 64);
    /* A long error message is cut at the packet size. */
    wr(wr(args, 0xFFFFFFF0u, 4), 0xFFFFFFF0u, 4);
    seq = send_request(READ, args, 8);
    expect_error(READ, seq, BAD_ADDRESS, "offset 4294967280 + length 4294967280 is");
    CHECK(packet_length == 64);
    /* TIMED_CALL: one entry of 7 repeats needs 7 + 4 + 56 = 67 bytes. */
    uint8_t timed[7];
    timed[0] = 1;
    wr(wr(wr(&timed[1], 1, 2), 0, 2), 7, 2);
    seq = send_request(TIMED_CALL, timed, 7);
    expect_error(TIMED_CALL, seq, TOO_LARGE, "exceeds the packet size (64 bytes)");
    wr(&timed[5], 6, 2);
    uint8_t ticks[64];
    CHECK(call_ok(TIMED_CALL, timed, 7, ticks, sizeof ticks) == 4 + 6 * 8);

    if (MAX >= 100) {
        CHECK(packet_size(100) == 100);
        read_ok(0, 93, data);
        CHECK(packet_length == 100);
    }
    /* A new session starts at the size its START_INIT proposed, or the largest. */
    CHECK(open_session_with(0x43, 80) == (MAX < 80 ? MAX : 80u));
    CHECK(open_session_with(0x44, 3) == 64);
    open_session(0x45);
    seq = send_request(PACKET_SIZE, args, 3);
    expect_error(PACKET_SIZE, seq, BAD_MESSAGE, "PACKET_SIZE takes 4 bytes of arguments, got 3");
}

static void test_alloc_free(void)
{
    CHECK(alloc(100, 16) == 128);
    CHECK(alloc(50, 64) == 256);
    CHECK(alloc(3000, 1) == 306);

    uint8_t args[8];
    wr(wr(args, 1000, 4), 4, 4);
    uint16_t seq = send_request(ALLOC, args, 8);
    expect_error(ALLOC, seq, NO_MEMORY, "no free block of 1000 bytes aligned to 4");

    wr(wr(args, 10, 4), 3, 4);
    seq = send_request(ALLOC, args, 8);
    expect_error(ALLOC, seq, BAD_MESSAGE, "align 3 is not a power of two");
    wr(wr(args, 10, 4), 0, 4);
    seq = send_request(ALLOC, args, 8);
    expect_error(ALLOC, seq, BAD_MESSAGE, "align 0 is not a power of two");
    seq = send_request(ALLOC, args, 5);
    expect_error(ALLOC, seq, BAD_MESSAGE, "ALLOC takes 8 bytes of arguments, got 5");

    /* An alignment larger than the arena fails cleanly (no overflow). */
    wr(wr(args, 1, 4), 0x80000000u, 4);
    seq = send_request(ALLOC, args, 8);
    expect_error(ALLOC, seq, NO_MEMORY, "no free block");

    free_ok(256);
    wr(args, 256, 4);
    seq = send_request(FREE, args, 4);
    expect_error(FREE, seq, BAD_ADDRESS, "offset 256 is not an allocated block");
    wr(args, 12345, 4);
    seq = send_request(FREE, args, 4);
    expect_error(FREE, seq, BAD_ADDRESS, "offset 12345 is not an allocated block");

    /* First fit: the gap the freed block left. */
    CHECK(alloc(20, 4) == 228);
    CHECK(alloc(0, 1) == 248); /* a zero-byte block still gets its own offset */

    /* Fill the block table. */
    uint32_t held = 4, offsets[MB_RPC_MAX_ALLOCS];
    uint32_t count = 0;
    for (;;) {
        wr(wr(args, 1, 4), 1, 4);
        seq = send_request(ALLOC, args, 8);
        CHECK(next_packet());
        CHECK(packet[3] == (ALLOC | 0x80) && rd16(&packet[4]) == seq);
        if (packet[6] != OK) {
            CHECK(packet[6] == NO_MEMORY);
            char message[200] = {0};
            memcpy(message, &packet[7], packet_length - 7 < 199 ? packet_length - 7 : 199);
            CHECK(strstr(message, "allocation table is full") != NULL);
            break;
        }
        offsets[count++] = rd32(&packet[7]);
        CHECK(count <= MB_RPC_MAX_ALLOCS);
    }
    expect_silence();
    CHECK(held + count == MB_RPC_MAX_ALLOCS);
    for (uint32_t i = 0; i < count; i++) {
        free_ok(offsets[i]);
    }
    free_ok(128);
    free_ok(306);
    free_ok(228);
    free_ok(248);
    CHECK(alloc(100, 16) == 128); /* everything freed: first fit is the pool start again */
    free_ok(128);
}

static void test_write_read(void)
{
    static uint8_t data[BIG], back[BIG], payload[BIG];
    const uint32_t big = 2 * MAX + 10; /* larger than the receive buffer and than one reply */
    for (uint32_t i = 0; i < big; i++) {
        data[i] = (uint8_t)(i % 7 == 0 ? 0xFF : i * 31u); /* plenty of escaped FFs */
    }
    write_ok(1000, data, big);
    CHECK(memcmp(mb_rpc_arena + 1000, data, big) == 0);
    read_ok(1000, big, back);
    CHECK(memcmp(back, data, big) == 0);
    write_ok(FAKE_ARENA_BYTES - 1, data, 1); /* the last byte */
    write_ok(FAKE_ARENA_BYTES, data, 0);     /* empty, at the very end */
    read_ok(FAKE_ARENA_BYTES - 1, 1, back);
    CHECK(back[0] == data[0]);

    /* A corrupted header CRC: no reply, nothing stored. */
    memset(mb_rpc_arena + 2000, 0x11, 128);
    uint16_t seq = next_seq++;
    send_raw_payload(payload, build_write(payload, session, seq, 2000, 32, data, 32, 0x0100), 0);
    expect_silence();
    /* The same with the header's offset corrupted after its CRC was computed (what a line error
     * does, the packet CRC being right or not): the header CRC catches it before a byte lands at
     * the wrong place. */
    const uint32_t n = build_write(payload, session, seq, 2000, 32, data, 32, 0);
    payload[6] ^= 0x20; /* offset 2000 -> 2032 */
    send_raw_payload(payload, n, 0);
    expect_silence();
    for (unsigned i = 0; i < 128; i++) {
        CHECK(mb_rpc_arena[2000 + i] == 0x11);
    }

    /* A bad packet CRC (data corrupted in flight): no reply. */
    send_raw_payload(payload, build_write(payload, session, seq, 2000, 32, data, 32, 0), 0x0001);
    expect_silence();
    /* Its retry succeeds. */
    send_raw_payload(payload, build_write(payload, session, seq, 2000, 32, data, 32, 0), 0);
    uint32_t rn;
    expect_reply(WRITE, seq, OK, &rn);
    expect_silence();
    CHECK(memcmp(mb_rpc_arena + 2000, data, 32) == 0);
    /* The host, not seeing that reply in time, sent the WRITE again and this copy's data was
     * damaged on the way (its packet CRC fails): the host takes the first reply and moves on, so
     * the damaged copy must not land. An intact copy is acknowledged again. */
    static uint8_t damaged[32];
    memset(damaged, 0xEE, sizeof damaged);
    send_raw_payload(payload, build_write(payload, session, seq, 2000, 32, damaged, 32, 0), 0x0001);
    expect_silence();
    CHECK(memcmp(mb_rpc_arena + 2000, data, 32) == 0);
    send_raw_payload(payload, build_write(payload, session, seq, 2000, 32, data, 32, 0), 0);
    expect_reply(WRITE, seq, OK, &rn);
    expect_silence();
    CHECK(memcmp(mb_rpc_arena + 2000, data, 32) == 0);

    /* Outside the arena: an error, nothing stored, the guard intact. */
    memset(mb_rpc_arena + 3990, 0x22, 10);
    seq = next_seq++;
    send_raw_payload(payload, build_write(payload, session, seq, 3990, 20, data, 20, 0), 0);
    expect_error(WRITE, seq, BAD_ADDRESS, "offset 3990 + length 20 is outside the arena (4000 bytes)");
    seq = next_seq++;
    send_raw_payload(payload, build_write(payload, session, seq, 0xFFFFFFF0u, 0x20, data, 0x20, 0), 0);
    expect_error(WRITE, seq, BAD_ADDRESS, "offset 4294967280 + length 32 is outside the arena");
    seq = next_seq++; /* a streamed (longer than the buffer) WRITE out of range */
    send_raw_payload(payload, build_write(payload, session, seq, FAKE_ARENA_BYTES - big + 1, big, data, big, 0), 0);
    expect_error(WRITE, seq, BAD_ADDRESS, "is outside the arena (4000 bytes)");
    for (unsigned i = 0; i < 10; i++) {
        CHECK(mb_rpc_arena[3990 + i] == 0x22);
    }
    CHECK(fake_guard_ok());

    /* Header length and packet length disagree. */
    seq = next_seq++;
    send_raw_payload(payload, build_write(payload, session, seq, 2000, 30, data, 20, 0), 0);
    expect_error(WRITE, seq, BAD_MESSAGE, "WRITE packet holds 20 data bytes, its header says 30");
    /* Too short to hold the header at all. */
    seq = send_request(WRITE, data, 4);
    expect_error(WRITE, seq, BAD_MESSAGE, "WRITE needs a 16-byte header");
    /* A stale session id: dropped, nothing stored. */
    memset(mb_rpc_arena + 2000, 0x33, 32);
    send_raw_payload(payload, build_write(payload, (uint16_t)(session ^ 0x0001), next_seq++, 2000, 32, data, 32, 0), 0);
    expect_silence();
    CHECK(mb_rpc_arena[2000] == 0x33 && mb_rpc_arena[2031] == 0x33);

    /* READ errors. */
    uint8_t args[8];
    wr(wr(args, 4096, 4), 64, 4);
    seq = send_request(READ, args, 8);
    expect_error(READ, seq, BAD_ADDRESS, "offset 4096 + length 64 is outside the arena (4000 bytes)");
    wr(wr(args, 1, 4), 0xFFFFFFFFu, 4);
    seq = send_request(READ, args, 8);
    expect_error(READ, seq, BAD_ADDRESS, "offset 1 + length 4294967295 is outside the arena (4000 bytes)");
    seq = send_request(READ, args, 7);
    expect_error(READ, seq, BAD_MESSAGE, "READ takes 8 bytes of arguments, got 7");
}

static int32_t call_function(uint16_t function)
{
    uint8_t args[2], result[4];
    wr(args, function, 2);
    CHECK(call_ok(CALL, args, 2, result, 4) == 4);
    return (int32_t)rd32(result);
}

static void test_call_and_run(void)
{
    uint8_t input[16];
    for (unsigned i = 0; i < 16; i++) {
        input[i] = (uint8_t)(i * 3);
    }
    write_ok(0, input, 16);
    unsigned long calls = fake_op_calls;
    CHECK(call_function(1) == 0);
    CHECK(call_function(2) == 0);
    CHECK(fake_op_calls == calls + 2);
    for (unsigned i = 0; i < 16; i++) {
        CHECK(mb_rpc_arena[16 + i] == (uint8_t)(i * 3 + 1) && mb_rpc_arena[32 + i] == (uint8_t)(i * 3 + 2));
    }
    memset(mb_rpc_arena + 16, 0, 32);
    CHECK(call_function(0) == 0); /* the whole model */
    CHECK(mb_rpc_arena[32 + 5] == 17);

    const uint8_t bad[] = {5, 0};
    uint16_t seq = send_request(CALL, bad, 2);
    expect_error(CALL, seq, BAD_FUNCTION, "function 5 is out of range (5 functions)");
    seq = send_request(CALL, bad, 1);
    expect_error(CALL, seq, BAD_MESSAGE, "CALL takes 2 bytes of arguments, got 1");

    /* m1 fails with 7 when ws[0] is 0xEE: the return value, not a status. */
    const uint8_t fail = 0xEE, fine = 0x10;
    write_ok(64, &fail, 1);
    CHECK(call_function(4) == 7);
    CHECK(call_function(3) == 7);
    write_ok(64, &fine, 1);
    CHECK(call_function(4) == 0 && mb_rpc_arena[65] == 0x11);

    uint8_t result[12];
    const uint8_t model0 = 0;
    calls = fake_op_calls;
    CHECK(call_ok(RUN, &model0, 1, result, sizeof result) == 12);
    CHECK(rd32(result) == 0 && rd64(result + 4) == FAKE_TIMER_STEP);
    CHECK(fake_op_calls == calls + 2);
    const uint8_t model2 = 2;
    seq = send_request(RUN, &model2, 1);
    expect_error(RUN, seq, BAD_FUNCTION, "model 2 is out of range (2 models)");
}

static void test_timed_call(void)
{
    uint8_t args[1 + 6 * 4], result[MB_RPC_MAX_PACKET];
    const uint8_t fine = 0x10, fail = 0xEE;
    write_ok(64, &fine, 1);

    args[0] = 2;
    wr(wr(wr(args + 1, 1, 2), 2, 2), 3, 2);
    wr(wr(wr(args + 7, 4, 2), 0, 2), 2, 2);
    unsigned long calls = fake_op_calls;
    uint32_t n = call_ok(TIMED_CALL, args, 13, result, sizeof result);
    CHECK(n == (4 + 3 * 8) + (4 + 2 * 8));
    CHECK(fake_op_calls == calls + 2 + 3 + 2);
    CHECK(rd32(result) == 0);
    for (unsigned i = 0; i < 3; i++) {
        CHECK(rd64(result + 4 + 8 * i) == FAKE_TIMER_STEP);
    }
    CHECK(rd32(result + 28) == 0 && rd64(result + 32) == FAKE_TIMER_STEP && rd64(result + 40) == FAKE_TIMER_STEP);

    /* An entry stops at its first failure; its remaining ticks are 0; the next entry still runs. */
    write_ok(64, &fail, 1);
    args[0] = 2;
    wr(wr(wr(args + 1, 4, 2), 0, 2), 3, 2);
    wr(wr(wr(args + 7, 1, 2), 0, 2), 1, 2);
    calls = fake_op_calls;
    n = call_ok(TIMED_CALL, args, 13, result, sizeof result);
    CHECK(n == (4 + 3 * 8) + (4 + 8));
    CHECK(fake_op_calls == calls + 1 + 1);
    CHECK(rd32(result) == 7 && rd64(result + 4) == FAKE_TIMER_STEP && rd64(result + 12) == 0 && rd64(result + 20) == 0);
    CHECK(rd32(result + 28) == 0 && rd64(result + 32) == FAKE_TIMER_STEP);
    /* A failing warmup: no timed run at all. */
    args[0] = 1;
    wr(wr(wr(args + 1, 4, 2), 2, 2), 2, 2);
    calls = fake_op_calls;
    n = call_ok(TIMED_CALL, args, 7, result, sizeof result);
    CHECK(n == 4 + 16 && rd32(result) == 7 && rd64(result + 4) == 0 && rd64(result + 12) == 0);
    CHECK(fake_op_calls == calls + 1);
    write_ok(64, &fine, 1);

    /* Empty batch. */
    args[0] = 0;
    CHECK(call_ok(TIMED_CALL, args, 1, result, sizeof result) == 0);

    /* The largest batch that fits, then one tick more. */
    const uint32_t fit = (MAX - 7 - 4) / 8;
    args[0] = 1;
    wr(wr(wr(args + 1, 1, 2), 0, 2), fit, 2);
    CHECK(call_ok(TIMED_CALL, args, 7, result, sizeof result) == 4 + 8 * fit);
    wr(args + 5, fit + 1, 2);
    calls = fake_op_calls;
    uint16_t seq = send_request(TIMED_CALL, args, 7);
    expect_error(TIMED_CALL, seq, TOO_LARGE, "exceeds the packet size");
    CHECK(fake_op_calls == calls);

    args[0] = 2;
    seq = send_request(TIMED_CALL, args, 7);
    expect_error(TIMED_CALL, seq, BAD_MESSAGE, "TIMED_CALL takes 13 bytes of arguments, got 7");
    seq = send_request(TIMED_CALL, args, 0);
    expect_error(TIMED_CALL, seq, BAD_MESSAGE, "TIMED_CALL takes 1 bytes of arguments, got 0");
    args[0] = 2;
    wr(wr(wr(args + 1, 1, 2), 0, 2), 1, 2);
    wr(wr(wr(args + 7, 9, 2), 0, 2), 1, 2);
    calls = fake_op_calls;
    seq = send_request(TIMED_CALL, args, 13);
    expect_error(TIMED_CALL, seq, BAD_FUNCTION, "function 9 is out of range");
    CHECK(fake_op_calls == calls); /* nothing ran before the bad entry was found */
}

static void test_reply_cache(void)
{
    uint8_t args[8];
    uint8_t first[64];
    uint32_t first_length;

    /* A retransmitted CALL gets the same reply and runs nothing. */
    wr(args, 1, 2);
    const uint16_t seq = send_request(CALL, args, 2);
    CHECK(next_packet());
    memcpy(first, packet, packet_length);
    first_length = packet_length;
    const unsigned long calls = fake_op_calls;
    send_request_as(session, CALL, seq, args, 2);
    CHECK(next_packet());
    CHECK(packet_length == first_length && memcmp(packet, first, first_length) == 0);
    CHECK(fake_op_calls == calls);
    expect_silence();

    /* A retransmitted ALLOC does not leak a second block. */
    wr(wr(args, 64, 4), 8, 4);
    const uint16_t alloc_seq = send_request(ALLOC, args, 8);
    uint32_t n;
    const uint32_t offset = rd32(expect_reply(ALLOC, alloc_seq, OK, &n));
    send_request_as(session, ALLOC, alloc_seq, args, 8);
    CHECK(rd32(expect_reply(ALLOC, alloc_seq, OK, &n)) == offset);
    expect_silence();
    free_ok(offset);
    wr(args, offset, 4);
    const uint16_t again = send_request(FREE, args, 4);
    expect_error(FREE, again, BAD_ADDRESS, "is not an allocated block"); /* only one block existed */

    /* An error reply is remembered too. */
    send_request_as(session, FREE, again, args, 4);
    expect_error(FREE, again, BAD_ADDRESS, "is not an allocated block");

    /* INFO, READ, WRITE are re-run. */
    const uint8_t value = 0x5A;
    write_ok(500, &value, 1);
    uint8_t back;
    wr(wr(args, 500, 4), 1, 4);
    const uint16_t read_seq = send_request(READ, args, 8);
    CHECK(*expect_reply(READ, read_seq, OK, &n) == 0x5A);
    mb_rpc_arena[500] = 0x5B;
    send_request_as(session, READ, read_seq, args, 8);
    CHECK(*expect_reply(READ, read_seq, OK, &n) == 0x5B);
    read_ok(500, 1, &back);

    /* The same seq with another opcode is a new request, not a retransmission. */
    wr(args, 2, 2);
    const uint16_t call_seq = send_request(CALL, args, 2);
    expect_reply(CALL, call_seq, OK, &n);
    const uint8_t model1 = 1;
    const unsigned long before = fake_op_calls;
    send_request_as(session, RUN, call_seq, &model1, 1);
    expect_reply(RUN, call_seq, OK, &n);
    CHECK(fake_op_calls == before + 1);
    expect_silence();
}

static void test_stale_and_noise(void)
{
    uint8_t args[2];
    wr(args, 1, 2);
    const unsigned long calls = fake_op_calls;
    send_request_as((uint16_t)(session ^ 0x0100), CALL, next_seq++, args, 2);
    send_request_as((uint16_t)(session & 0xFF00), CALL, next_seq++, args, 2);
    send_request_as(0, CALL, next_seq++, args, 2);
    expect_silence();
    CHECK(fake_op_calls == calls);

    /* Unknown opcode, a body too short for a seq, types the device does not take. */
    uint16_t seq = send_request(0x33, NULL, 0);
    expect_error(0x33, seq, UNKNOWN_OPCODE, "unknown opcode 51");
    /* BLOB_LOAD and BLOB_RUN in a firmware without the table runner (runtime/table/rpc_runner.c
     * not linked): refused, saying what the firmware lacks. */
    const uint8_t blob_args[16] = {0};
    seq = send_request(0x0C, blob_args, sizeof blob_args);
    expect_error(0x0C, seq, UNKNOWN_OPCODE, "BLOB_LOAD: this firmware has no table runner");
    seq = send_request(0x0D, NULL, 0);
    expect_error(0x0D, seq, UNKNOWN_OPCODE, "BLOB_RUN: this firmware has no table runner");
    const uint8_t short_body[] = {NORMAL, (uint8_t)session, (uint8_t)(session >> 8), CALL, 1};
    send_raw_payload(short_body, sizeof short_body, 0);
    const uint8_t log[] = {LOG, 0, 0, 'h', 'i'};
    send_raw_payload(log, sizeof log, 0);
    const uint8_t tiny[] = {NORMAL};
    send_raw_payload(tiny, 1, 0);
    send_raw_payload(tiny, 0, 0);
    expect_silence();

    /* Noise, no-ops, a framing error and an interrupted packet before a good one. */
    const uint8_t noise[] = {0x00, 0x12, 0xFF, 0xFE, 0x99, 0xFF, 0xFF, 0xFD, 0xFF, 0x00,
                             0xFF, 0xFD, 0x05, 0x00, 0x00, 0x00, 0x05, 0xFF, 0xFE, 0x01, 0xFF, 0x17,
                             0xFF, 0xFD, 0x40, 0x00, 0x00, 0x00, 0x05};
    feed(noise, sizeof noise); /* the last packet is cut off by the next start */
    uint8_t info[BIG];
    info_page(0, info, sizeof info);

    /* A packet longer than the buffer that is not a WRITE is dropped. */
    static uint8_t payload[BIG];
    memset(payload, 0, sizeof payload);
    payload[0] = NORMAL;
    wr(payload + 1, session, 2);
    payload[3] = INFO;
    wr(payload + 4, next_seq++, 2);
    send_raw_payload(payload, MAX + 1, 0);
    expect_silence();
    payload[3] = WRITE; /* a long WRITE whose header CRC is wrong (zeros): dropped, nothing stored */
    send_raw_payload(payload, MAX + 100, 0);
    expect_silence();
    const uint8_t first[] = {0, 0};
    seq = send_request(INFO, first, 2);
    uint32_t n;
    expect_reply(INFO, seq, OK, &n);
    expect_silence();
}

static void test_raw_receive(void)
{
    uint8_t args[4], raw[300];
    for (unsigned i = 0; i < sizeof raw; i++) {
        raw[i] = (uint8_t)(i % 3 == 0 ? 0xFF : 0xFD); /* looks like framing, must not be */
    }
    wr(args, sizeof raw, 4);
    const uint16_t seq = send_request(RAW_RECEIVE, args, 4);
    expect_silence();
    feed(raw, sizeof raw - 1);
    expect_silence();
    feed(raw + sizeof raw - 1, 1);
    uint32_t n;
    expect_reply(RAW_RECEIVE, seq, OK, &n);
    CHECK(n == 0);
    expect_silence();
    wr(args, 0, 4);
    call_ok(RAW_RECEIVE, args, 4, NULL, 0);
    uint8_t info[BIG];
    info_page(0, info, sizeof info);
}

static void test_new_session_and_reset(void)
{
    const uint16_t old = session;
    open_session(0x42); /* same host nonce: the device nonce still changes */
    CHECK(session != old);
    uint8_t args[2];
    wr(args, 1, 2);
    send_request_as(old, CALL, next_seq++, args, 2);
    expect_silence();

    /* A new session does not answer from the old one's cache. */
    const unsigned long calls = fake_op_calls;
    wr(args, 1, 2);
    const uint16_t seq = send_request(CALL, args, 2);
    uint32_t n;
    expect_reply(CALL, seq, OK, &n);
    open_session(0x43);
    send_request_as(session, CALL, seq, args, 2);
    expect_reply(CALL, seq, OK, &n);
    CHECK(fake_op_calls == calls + 2);

    CHECK(alloc(100, 16) == 128);
    const uint16_t reset_seq = send_request(RESET, NULL, 0);
    expect_reply(RESET, reset_seq, OK, &n);
    CHECK(n == 0);
    expect_boot();
    /* Session gone: the retransmitted RESET and any request learn it. */
    send_request_as(session, RESET, reset_seq, NULL, 0);
    expect_terminate();
    expect_silence();
    open_session(0x44);
    CHECK(alloc(100, 16) == 128); /* the reset freed the earlier block */

    const uint8_t extra = 1;
    const uint16_t bad = send_request(RESET, &extra, 1);
    expect_error(RESET, bad, BAD_MESSAGE, "RESET takes 0 bytes of arguments, got 1");

    /* A WRITE with no session is answered with TERMINATE (once its packet CRC proves it). */
    static uint8_t payload[BIG], data[BIG];
    const uint16_t write_seq = send_request(RESET, NULL, 0);
    expect_reply(RESET, write_seq, OK, &n);
    expect_boot();
    memset(mb_rpc_arena + 1500, 0x44, 2 * MAX);
    memset(data, 0x55, sizeof data);
    send_raw_payload(payload, build_write(payload, session, 7, 1500, 2 * MAX, data, 2 * MAX, 0), 0);
    expect_terminate();
    expect_silence();
    CHECK(mb_rpc_arena[1500] == 0x44 && mb_rpc_arena[1500 + 2 * MAX - 1] == 0x44);
    send_raw_payload(payload, build_write(payload, session, 7, 1500, 2 * MAX, data, 2 * MAX, 0), 1);
    expect_silence();
}

int main(void)
{
    fake_models_init();
    mb_frame_decoder_init(&output_decoder);
    mb_rpc_server_init();
    test_boot_and_session();
    test_info();
    test_packet_size();
    test_alloc_free();
    test_write_read();
    test_call_and_run();
    test_timed_call();
    test_reply_cache();
    test_stale_and_noise();
    test_raw_receive();
    test_new_session_and_reset();
    CHECK(fake_guard_ok());
    printf("server ok: max packet %u, %lu operator runs, %zu output bytes\n", (unsigned)MAX, fake_op_calls,
           fake_output_length);
    return 0;
}
