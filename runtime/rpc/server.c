/* The RPC server: the session and RPC layers of docs/rpc-protocol.md on top of the framing in
 * framing.c. It owns the arena's pool (ALLOC/FREE), streams WRITE data straight into the arena,
 * runs models and operators from the generated table (mb_rpc_models) and answers on the console.
 *
 * Everything is driven by mb_rpc_server_feed(), one received byte at a time, so the same code
 * serves a blocking loop (mb_rpc_server_run), an interrupt-fed board and the tests. RAM: the
 * receive buffer and the reply buffer (MB_RPC_MAX_PACKET each), the encoder's small output buffer
 * and the allocator's block table. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mb_board_config.h"
#include "microbuild/platform.h"
#include "microbuild/rpc.h"
#include "microbuild/rpc/crc16.h"
#include "microbuild/rpc/framing.h"

/* The largest fixed-size reply (RUN: 7 + 12 bytes) and a useful error message must fit. */
#if MB_RPC_MAX_PACKET < 64
#error "MB_RPC_MAX_PACKET must be at least 64"
#endif
#if MB_RPC_MAX_ALLOCS < 1 || MB_RPC_MAX_ALLOCS > 65535
#error "MB_RPC_MAX_ALLOCS must be 1..65535"
#endif

enum {
    TYPE_START_INIT = 0x01,
    TYPE_START_REPLY = 0x02,
    TYPE_TERMINATE = 0x03,
    TYPE_LOG = 0x04,
    TYPE_NORMAL = 0x05
};

enum {
    OP_INFO = 0x01,
    OP_ALLOC = 0x02,
    OP_FREE = 0x03,
    OP_WRITE = 0x04,
    OP_READ = 0x05,
    OP_CALL = 0x06,
    OP_TIMED_CALL = 0x07,
    OP_RUN = 0x08,
    OP_RESET = 0x09,
    OP_RAW_RECEIVE = 0x0A,
    OP_PACKET_SIZE = 0x0B,
    OP_BLOB_LOAD = 0x0C,
    OP_BLOB_RUN = 0x0D,
    OP_REPLY = 0x80
};

enum {
    STATUS_OK = 0,
    STATUS_BAD_MESSAGE = 1,
    STATUS_UNKNOWN_OPCODE = 2,
    STATUS_BAD_ADDRESS = 3,
    STATUS_NO_MEMORY = 4,
    STATUS_BAD_FUNCTION = 5,
    STATUS_TOO_LARGE = 6,
    STATUS_BAD_BLOB = 7
};

#define SESSION_HEADER 3u             /* type u8, session id u16 */
#define REPLY_HEADER 7u               /* session header, opcode u8, seq u16, status u8 */
#define WRITE_HEADER 16u              /* request header, offset u32, length u32, header crc u16 */
#define WRITE_HEADER_CRC_OFFSET 14u
#define MAX_PACKET ((uint32_t)(MB_RPC_MAX_PACKET))
/* The smallest packet size a host may negotiate: a RUN reply (19 bytes) and the start of an error
 * message fit. */
#define MIN_PACKET 64u

/* What the receiver does with the bytes of the packet being received. */
enum {
    RX_IDLE = 0, /* no packet, or one being skipped */
    RX_BUFFER,   /* into rx_buffer (a whole packet, or the header of a WRITE) */
    RX_STREAM,   /* WRITE data, into the arena at stream_offset */
    RX_DISCARD   /* read to its end, then send the pending answer if its CRC is good */
};

/* The answer a discarded WRITE gets once its packet CRC proves it was received intact. */
enum {
    PENDING_NONE = 0,
    PENDING_TERMINATE,   /* no session */
    PENDING_BAD_LENGTH,  /* packet length != 16 + data length */
    PENDING_BAD_ADDRESS  /* outside the arena */
};

typedef struct {
    uint32_t offset;
    uint32_t bytes;
} block;

static mb_frame_decoder decoder;
static mb_frame_encoder encoder;

static uint8_t rx_buffer[MB_RPC_MAX_PACKET];
static uint32_t rx_length; /* the packet's payload length */
static uint32_t rx_used;   /* bytes of it in rx_buffer */
static uint8_t rx_mode;
static uint32_t stream_offset;
static uint8_t pending;
static uint16_t write_seq;
static uint32_t write_offset;
static uint32_t write_length;
/* The header (session, seq, offset, length) of the WRITE last acknowledged, while its reply is the
 * last one sent. A host that did not see that reply in time sends the same WRITE again; that copy's
 * data is not stored, because it may be damaged and the host, already holding the first reply,
 * would never rewrite it. */
static uint8_t acked_write_header[WRITE_HEADER_CRC_OFFSET];
static uint8_t acked_write_valid;

/* The reply being built, which is also the reply cache: after a non-idempotent request it holds
 * that request's whole reply payload until the next request replaces it. */
static uint8_t reply[MB_RPC_MAX_PACKET];
static uint32_t reply_used;
static uint8_t cache_valid;
static uint8_t cache_opcode;
static uint16_t cache_seq;
static uint32_t cache_length;

static uint16_t session_id; /* 0: no session */
/* The session's packet size: no reply payload is longer. The host lowers it when frames keep
 * failing (a long packet is the one a noisy link damages) and raises it when they pass; START_INIT
 * and PACKET_SIZE negotiate it, between MIN_PACKET (or what one INFO item needs) and MAX_PACKET. */
static uint32_t packet_limit = MAX_PACKET;

/* Not reset by a RESET, so a restarted server still hands out a nonce different from the last. */
static uint32_t nonce_counter;
static uint32_t nonce_salt;
static uint8_t last_nonce;

static block blocks[MB_RPC_MAX_ALLOCS]; /* sorted by offset */
static uint32_t block_count;

static uint32_t raw_remaining; /* RAW_RECEIVE bytes still to swallow */
static uint16_t raw_seq;

/* The table runner, when the firmware links one (runtime/table/rpc_runner.c): a weak reference,
 * so an RPC firmware without a kernel set links without it and reads it as absent (NULL). */
extern const mb_rpc_table_runner_t mb_rpc_table_runner __attribute__((weak));

/* The model blob BLOB_LOAD checked, until a WRITE into it, a FREE or a RESET unloads it: BLOB_RUN
 * runs only a blob whose bytes are those that were checked. */
static uint8_t blob_loaded;
static uint32_t blob_offset;
static uint32_t blob_bytes;
static uint32_t blob_workspace_offset;

/* ---- little-endian fields (byte by byte: the buffers have no alignment) ---- */

static uint16_t get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | ((unsigned)p[1] << 8));
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static size_t text_length(const char *text)
{
    return text == NULL ? 0u : strlen(text);
}

/* str8 holds at most 255 bytes: longer names are cut. */
static uint8_t str8_length(const char *text)
{
    const size_t length = text_length(text);
    return (uint8_t)(length > 255u ? 255u : length);
}

/* ---- output straight to the encoder. A frame announces its length first, so a reply too big
 * for any buffer (INFO, the boot LOG) is produced twice: once only counting its bytes, then
 * sending them. ---- */

static int counting;
static uint32_t counted;

static void out_bytes(const void *data, size_t length)
{
    if (counting) {
        counted += (uint32_t)length;
    } else {
        mb_frame_encode_bytes(&encoder, data, length);
    }
}

static void out_u8(uint8_t value)
{
    out_bytes(&value, 1);
}

static void out_le(uint64_t value, unsigned bytes)
{
    uint8_t field[8];
    for (unsigned i = 0; i < bytes; i++) {
        field[i] = (uint8_t)(value >> (8u * i));
    }
    out_bytes(field, bytes);
}

static void out_str8(const char *text)
{
    const uint8_t length = str8_length(text);
    out_u8(length);
    out_bytes(text == NULL ? "" : text, length);
}

static void out_session_header(uint8_t type, uint16_t id)
{
    out_u8(type);
    out_le(id, 2);
}

static void send_streamed(void (*produce)(void))
{
    counting = 1;
    counted = 0;
    produce();
    counting = 0;
    mb_frame_encode_begin(&encoder, counted);
    produce();
    (void)mb_frame_encode_end(&encoder);
}

/* ---- building a reply in reply[] (appends past the end are cut, so a long message is
 * truncated rather than overflowing) ---- */

static void put_u8(uint8_t value)
{
    if (reply_used < packet_limit) {
        reply[reply_used++] = value;
    }
}

static void put_le(uint64_t value, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++) {
        put_u8((uint8_t)(value >> (8u * i)));
    }
}

static void put_text(const char *text)
{
    for (; text != NULL && *text != '\0'; text++) {
        put_u8((uint8_t)*text);
    }
}

static void put_decimal(uint64_t value)
{
    char digits[20];
    unsigned start = sizeof digits;
    do {
        digits[--start] = (char)('0' + (int)(value % 10u));
        value /= 10u;
    } while (value != 0u);
    while (start < sizeof digits) {
        put_u8((uint8_t)digits[start++]);
    }
}

static void send_packet(const uint8_t *payload, uint32_t length)
{
    mb_frame_encode_begin(&encoder, length);
    mb_frame_encode_bytes(&encoder, payload, length);
    (void)mb_frame_encode_end(&encoder);
}

static void send_terminate(void)
{
    mb_frame_encode_begin(&encoder, SESSION_HEADER);
    out_session_header(TYPE_TERMINATE, 0);
    (void)mb_frame_encode_end(&encoder);
}

static int is_idempotent(uint8_t opcode)
{
    return opcode == OP_INFO || opcode == OP_READ || opcode == OP_WRITE || opcode == OP_PACKET_SIZE;
}

/* Starts a reply in reply[]. Idempotent requests are never cached, and building one overwrites
 * the cache, so the cache is given up here; it then describes the last request executed, which is
 * the only one a host waiting for each reply can retransmit. */
static void begin_reply(uint8_t opcode, uint16_t seq, uint8_t status)
{
    cache_valid = 0;
    acked_write_valid = 0;
    reply_used = 0;
    put_u8(TYPE_NORMAL);
    put_le(session_id, 2);
    put_u8((uint8_t)(opcode | OP_REPLY));
    put_le(seq, 2);
    put_u8(status);
}

static void finish_reply(void)
{
    const uint8_t opcode = (uint8_t)(reply[3] & (uint8_t)~OP_REPLY);
    if (!is_idempotent(opcode)) {
        cache_valid = 1;
        cache_opcode = opcode;
        cache_seq = get_u16(&reply[4]);
        cache_length = reply_used;
    }
    send_packet(reply, reply_used);
}

static const char *opcode_name(uint8_t opcode)
{
    static const char *const names[] = {"?",    "INFO",       "ALLOC", "FREE",  "WRITE",      "READ",
                                        "CALL", "TIMED_CALL", "RUN",   "RESET", "RAW_RECEIVE", "PACKET_SIZE",
                                        "BLOB_LOAD", "BLOB_RUN"};
    return opcode < sizeof names / sizeof names[0] ? names[opcode] : "?";
}

/* Checks a request's argument length; on a mismatch answers BAD_MESSAGE and returns 0. */
static int expect_arguments(uint8_t opcode, uint16_t seq, uint32_t got, uint32_t wanted)
{
    if (got == wanted) {
        return 1;
    }
    begin_reply(opcode, seq, STATUS_BAD_MESSAGE);
    put_text(opcode_name(opcode));
    put_text(" takes ");
    put_decimal(wanted);
    put_text(" bytes of arguments, got ");
    put_decimal(got);
    finish_reply();
    return 0;
}

/* 1 if [offset, offset + length) lies in the arena (in 64 bits: the sum may pass 2^32). */
static int range_ok(uint32_t offset, uint32_t length)
{
    return (uint64_t)offset + length <= mb_rpc_arena_bytes;
}

static void bad_range(uint8_t opcode, uint16_t seq, uint32_t offset, uint32_t length)
{
    begin_reply(opcode, seq, STATUS_BAD_ADDRESS);
    put_text("offset ");
    put_decimal(offset);
    put_text(" + length ");
    put_decimal(length);
    put_text(" is outside the arena (");
    put_decimal(mb_rpc_arena_bytes);
    put_text(" bytes)");
    finish_reply();
}

/* ---- the function table: per model, the whole model, then each operator ---- */

static uint32_t listed_models(void)
{
    return mb_rpc_model_count > 255u ? 255u : mb_rpc_model_count;
}

static uint32_t function_count(void)
{
    uint32_t count = 0;
    for (uint32_t m = 0; m < listed_models(); m++) {
        count += 1u + mb_rpc_models[m].op_count;
    }
    return count > 65535u ? 65535u : count;
}

typedef struct {
    const mb_rpc_model *model;
    const mb_rpc_op *op; /* NULL: the whole model */
    uint32_t model_index;
} function_ref;

static int find_function(uint32_t index, function_ref *ref)
{
    if (index >= function_count()) {
        return 0;
    }
    for (uint32_t m = 0; m < listed_models(); m++) {
        const mb_rpc_model *model = &mb_rpc_models[m];
        if (index <= model->op_count) {
            ref->model = model;
            ref->model_index = m;
            ref->op = index == 0u ? NULL : &model->ops[index - 1u];
            return 1;
        }
        index -= 1u + model->op_count;
    }
    return 0;
}

static int call_function(const function_ref *ref)
{
    uint8_t *workspace = mb_rpc_arena + ref->model->workspace_offset;
    if (ref->op == NULL) {
        return ref->model->run(workspace);
    }
    /* run_op takes the position in execution order; op_index (the model's own numbering) can
     * skip numbers where the compiler fused operators. */
    return ref->model->run_op((uint32_t)(ref->op - ref->model->ops), workspace);
}

static int lookup_function(uint8_t opcode, uint16_t seq, uint32_t index, function_ref *ref)
{
    if (find_function(index, ref)) {
        return 1;
    }
    begin_reply(opcode, seq, STATUS_BAD_FUNCTION);
    put_text("function ");
    put_decimal(index);
    put_text(" is out of range (");
    put_decimal(function_count());
    put_text(" functions)");
    finish_reply();
    return 0;
}

/* ---- session ---- */

static uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    x ^= x >> 16;
    return x;
}

/* 1..255 and never the previous one, so traffic of the session this one replaces is told apart
 * even if the host reuses its nonce. The timer makes it differ between boots on real hardware
 * (the host's START_INIT arrives at a different cycle each time); the counter between sessions
 * of one boot. */
static uint8_t next_nonce(void)
{
    const uint64_t now = mb_timer_now();
    nonce_counter++;
    const uint32_t x = mix32(nonce_salt ^ (uint32_t)now ^ mix32((uint32_t)(now >> 32) + nonce_counter));
    uint8_t nonce = (uint8_t)(x ^ (x >> 8) ^ (x >> 16) ^ (x >> 24));
    while (nonce == 0u || nonce == last_nonce) {
        nonce++;
    }
    last_nonce = nonce;
    return nonce;
}

static uint32_t agreed_packet(uint32_t proposed);

/* START_INIT's body: version u8, then (optional) the packet size the host proposes, u32. */
static void start_session(const uint8_t *payload, uint32_t length)
{
    const uint16_t id = get_u16(&payload[1]);
    const uint8_t host_nonce = (uint8_t)(id >> 8);
    if (length < SESSION_HEADER + 1u || host_nonce == 0u || (id & 0xFFu) != 0u) {
        return; /* not a START_INIT a host would send */
    }
    session_id = (uint16_t)((unsigned)host_nonce << 8 | next_nonce());
    /* A new session's seq numbers owe nothing to the old one's. */
    cache_valid = 0;
    acked_write_valid = 0;
    packet_limit = agreed_packet(length >= SESSION_HEADER + 5u ? get_u32(&payload[SESSION_HEADER + 1u]) : 0u);
    mb_frame_encode_begin(&encoder, SESSION_HEADER + 5u);
    out_session_header(TYPE_START_REPLY, session_id);
    out_u8((uint8_t)MB_RPC_PROTOCOL_VERSION);
    out_le(packet_limit, 4);
    (void)mb_frame_encode_end(&encoder);
}

static void produce_log(void)
{
    static const char hex[] = "0123456789abcdef";
    const char *board = MB_BOARD_NAME;
    char digits[10]; /* a u32 */
    unsigned start = sizeof digits;
    uint32_t value = MAX_PACKET;
    do {
        digits[--start] = (char)('0' + (int)(value % 10u));
        value /= 10u;
    } while (value != 0u);

    out_session_header(TYPE_LOG, 0);
    out_bytes("microbuild rpc: board ", 22);
    out_bytes(board, text_length(board));
    out_bytes(", build ", 8);
    for (size_t i = 0; i < sizeof mb_rpc_build_id; i++) {
        out_bytes(&hex[mb_rpc_build_id[i] >> 4], 1);
        out_bytes(&hex[mb_rpc_build_id[i] & 0x0Fu], 1);
    }
    out_bytes(", max packet ", 13);
    out_bytes(&digits[start], sizeof digits - start);
}

static void send_boot_sequence(void)
{
    mb_frame_encode_noop(&encoder);
    send_terminate();
    send_streamed(produce_log);
}

/* ---- RPC handlers: each gets the arguments after opcode and seq ---- */

static uint16_t info_seq;
/* INFO lists one table of items: the device record (item 0), the models, then the functions; a
 * reply carries the items [info_first, info_end). */
static uint32_t info_first;
static uint32_t info_end;

static uint32_t info_items(void)
{
    return 1u + listed_models() + function_count();
}

static void produce_info_header(void)
{
    out_session_header(TYPE_NORMAL, session_id);
    out_u8(OP_INFO | OP_REPLY);
    out_le(info_seq, 2);
    out_u8(STATUS_OK);
    out_le(info_items(), 2);
    out_le(info_first, 2);
}

/* The reply header and the page header above. */
#define INFO_PAGE_HEADER (REPLY_HEADER + 4u)

static const char *function_name(const function_ref *ref)
{
    return ref->op == NULL ? ref->model->name : ref->op->name;
}

/* Item `index` of the table: the device record (0), a model (1..model count) or a function. */
static void produce_item(uint32_t index)
{
    const uint32_t models = listed_models();
    if (index == 0u) {
        out_u8((uint8_t)MB_RPC_PROTOCOL_VERSION);
        out_le(MAX_PACKET, 4);
        out_le(mb_rpc_arena_bytes, 4);
        out_le((uint64_t)(MB_TIMER_HZ), 8);
        out_bytes(mb_rpc_build_id, sizeof mb_rpc_build_id);
        out_str8(MB_BOARD_NAME);
        out_u8((uint8_t)models);
        out_le(function_count(), 2);
        return;
    }
    index--;
    if (index < models) {
        out_str8(mb_rpc_models[index].name);
        out_le(mb_rpc_models[index].workspace_offset, 4);
        out_le(mb_rpc_models[index].workspace_bytes, 4);
        return;
    }
    function_ref ref = {NULL, NULL, 0};
    (void)find_function(index - models, &ref);
    out_u8(ref.op == NULL ? 0u : 1u);
    out_u8((uint8_t)ref.model_index);
    if (ref.op == NULL) {
        out_le(0, 2);
        out_u8((uint8_t)(ref.model->input_count > 255u ? 255u : ref.model->input_count));
        out_u8((uint8_t)(ref.model->output_count > 255u ? 255u : ref.model->output_count));
    } else {
        out_le(ref.op->op_index, 2);
        out_u8(ref.op->inputs);
        out_u8(ref.op->outputs);
    }
    out_str8(function_name(&ref));
}

static uint32_t item_bytes(uint32_t index)
{
    counting = 1;
    counted = 0;
    produce_item(index);
    counting = 0;
    return counted;
}

static void produce_info(void)
{
    produce_info_header();
    for (uint32_t index = info_first; index < info_end; index++) {
        produce_item(index);
    }
}

/* INFO lists its table a page at a time, each reply within the session's packet size: the chance
 * that a noisy link damages a packet grows with its length, so no reply may be long. */
static void handle_info(uint16_t seq, const uint8_t *args, uint32_t argn)
{
    if (!expect_arguments(OP_INFO, seq, argn, 2)) {
        return;
    }
    cache_valid = 0;
    acked_write_valid = 0;
    info_seq = seq;
    const uint32_t items = info_items();
    info_first = get_u16(args);
    if (info_first > items) {
        info_first = items;
    }
    uint32_t bytes = INFO_PAGE_HEADER;
    info_end = info_first;
    while (info_end < items) {
        const uint32_t more = item_bytes(info_end);
        /* At least one item, so a host paging through the table moves on (the negotiated packet
         * size is never below what one item needs: see smallest_packet). */
        if (info_end > info_first && bytes + more > packet_limit) {
            break;
        }
        bytes += more;
        info_end++;
    }
    /* Streamed: the reply is produced straight into the encoder, never buffered. */
    send_streamed(produce_info);
}

/* The smallest packet size this device agrees to: MIN_PACKET, or more if one INFO item alone
 * needs more (a long board or operator name), so every INFO page fits the packet size. */
static uint32_t smallest_packet(void)
{
    uint32_t smallest = MIN_PACKET;
    for (uint32_t index = 0; index < info_items(); index++) {
        const uint32_t page = INFO_PAGE_HEADER + item_bytes(index);
        if (page > smallest) {
            smallest = page;
        }
    }
    return smallest > MAX_PACKET ? MAX_PACKET : smallest;
}

/* The packet size for a host's proposal: 0 asks for the largest. */
static uint32_t agreed_packet(uint32_t proposed)
{
    if (proposed == 0u || proposed > MAX_PACKET) {
        return MAX_PACKET;
    }
    const uint32_t smallest = smallest_packet();
    return proposed < smallest ? smallest : proposed;
}

static void handle_packet_size(uint16_t seq, const uint8_t *args, uint32_t argn)
{
    if (!expect_arguments(OP_PACKET_SIZE, seq, argn, 4)) {
        return;
    }
    /* The reply already obeys the new size (it is 11 bytes, below any size agreed). */
    packet_limit = agreed_packet(get_u32(args));
    begin_reply(OP_PACKET_SIZE, seq, STATUS_OK);
    put_le(packet_limit, 4);
    finish_reply();
}

static uint64_t align_up(uint64_t value, uint64_t align)
{
    return (value + align - 1u) & ~(align - 1u);
}

static void handle_alloc(uint16_t seq, const uint8_t *args, uint32_t argn)
{
    if (!expect_arguments(OP_ALLOC, seq, argn, 8)) {
        return;
    }
    const uint32_t requested = get_u32(&args[0]);
    const uint32_t align = get_u32(&args[4]);
    if (align == 0u || (align & (align - 1u)) != 0u) {
        begin_reply(OP_ALLOC, seq, STATUS_BAD_MESSAGE);
        put_text("align ");
        put_decimal(align);
        put_text(" is not a power of two");
        finish_reply();
        return;
    }
    if (block_count == MB_RPC_MAX_ALLOCS) {
        begin_reply(OP_ALLOC, seq, STATUS_NO_MEMORY);
        put_text("the allocation table is full (");
        put_decimal(MB_RPC_MAX_ALLOCS);
        put_text(" blocks)");
        finish_reply();
        return;
    }
    /* A zero-byte block still gets a byte, so every allocation has its own offset to FREE. */
    const uint32_t bytes = requested == 0u ? 1u : requested;

    uint64_t gap_start = mb_rpc_pool_offset;
    uint64_t used = 0;
    for (uint32_t i = 0; i <= block_count; i++) {
        const uint64_t gap_end = i < block_count ? blocks[i].offset : mb_rpc_arena_bytes;
        const uint64_t start = align_up(gap_start, align);
        if (start + bytes <= gap_end) {
            if (i < block_count) {
                memmove(&blocks[i + 1u], &blocks[i], (block_count - i) * sizeof blocks[0]);
            }
            blocks[i].offset = (uint32_t)start;
            blocks[i].bytes = bytes;
            block_count++;
            begin_reply(OP_ALLOC, seq, STATUS_OK);
            put_le(start, 4);
            finish_reply();
            return;
        }
        if (i < block_count) {
            gap_start = (uint64_t)blocks[i].offset + blocks[i].bytes;
            used += blocks[i].bytes;
        }
    }
    begin_reply(OP_ALLOC, seq, STATUS_NO_MEMORY);
    put_text("no free block of ");
    put_decimal(requested);
    put_text(" bytes aligned to ");
    put_decimal(align);
    put_text(" (pool ");
    put_decimal(mb_rpc_arena_bytes > mb_rpc_pool_offset ? mb_rpc_arena_bytes - mb_rpc_pool_offset : 0u);
    put_text(" bytes, ");
    put_decimal(used);
    put_text(" allocated)");
    finish_reply();
}

static void handle_free(uint16_t seq, const uint8_t *args, uint32_t argn)
{
    if (!expect_arguments(OP_FREE, seq, argn, 4)) {
        return;
    }
    const uint32_t offset = get_u32(args);
    for (uint32_t i = 0; i < block_count; i++) {
        if (blocks[i].offset == offset) {
            block_count--;
            if (i < block_count) {
                memmove(&blocks[i], &blocks[i + 1u], (block_count - i) * sizeof blocks[0]);
            }
            blob_loaded = 0; /* the blob or its workspace may have been this block */
            begin_reply(OP_FREE, seq, STATUS_OK);
            finish_reply();
            return;
        }
    }
    begin_reply(OP_FREE, seq, STATUS_BAD_ADDRESS);
    put_text("offset ");
    put_decimal(offset);
    put_text(" is not an allocated block");
    finish_reply();
}

static void handle_read(uint16_t seq, const uint8_t *args, uint32_t argn)
{
    if (!expect_arguments(OP_READ, seq, argn, 8)) {
        return;
    }
    const uint32_t offset = get_u32(&args[0]);
    const uint32_t length = get_u32(&args[4]);
    if (!range_ok(offset, length)) {
        bad_range(OP_READ, seq, offset, length);
        return;
    }
    /* In 64 bits: length may be close to 2^32. */
    if ((uint64_t)REPLY_HEADER + length > packet_limit) {
        begin_reply(OP_READ, seq, STATUS_TOO_LARGE);
        put_text("a READ of ");
        put_decimal(length);
        put_text(" bytes exceeds the packet size (");
        put_decimal(packet_limit);
        put_text(" bytes, ");
        put_decimal(packet_limit - REPLY_HEADER);
        put_text(" of data)");
        finish_reply();
        return;
    }
    cache_valid = 0;
    acked_write_valid = 0;
    /* Streamed from the arena, which the reply buffer need not hold. */
    mb_frame_encode_begin(&encoder, REPLY_HEADER + length);
    out_session_header(TYPE_NORMAL, session_id);
    out_u8(OP_READ | OP_REPLY);
    out_le(seq, 2);
    out_u8(STATUS_OK);
    out_bytes(mb_rpc_arena + offset, length);
    (void)mb_frame_encode_end(&encoder);
}

static void handle_call(uint16_t seq, const uint8_t *args, uint32_t argn)
{
    function_ref ref = {NULL, NULL, 0};
    if (!expect_arguments(OP_CALL, seq, argn, 2) || !lookup_function(OP_CALL, seq, get_u16(args), &ref)) {
        return;
    }
    const int32_t result = (int32_t)call_function(&ref);
    begin_reply(OP_CALL, seq, STATUS_OK);
    put_le((uint32_t)result, 4);
    finish_reply();
}

static void handle_timed_call(uint16_t seq, const uint8_t *args, uint32_t argn)
{
    if (argn < 1u) {
        (void)expect_arguments(OP_TIMED_CALL, seq, argn, 1);
        return;
    }
    const uint32_t count = args[0];
    if (!expect_arguments(OP_TIMED_CALL, seq, argn, 1u + 6u * count)) {
        return;
    }
    /* Every entry checked and the reply sized before anything runs: an error never comes after
     * some functions already ran. */
    uint32_t length = REPLY_HEADER;
    function_ref ref = {NULL, NULL, 0};
    for (uint32_t e = 0; e < count; e++) {
        const uint8_t *entry = &args[1u + 6u * e];
        if (!lookup_function(OP_TIMED_CALL, seq, get_u16(entry), &ref)) {
            return;
        }
        length += 4u + 8u * (uint32_t)get_u16(&entry[4]);
    }
    if (length > packet_limit) {
        begin_reply(OP_TIMED_CALL, seq, STATUS_TOO_LARGE);
        put_text("the reply of ");
        put_decimal(length);
        put_text(" bytes exceeds the packet size (");
        put_decimal(packet_limit);
        put_text(" bytes)");
        finish_reply();
        return;
    }

    begin_reply(OP_TIMED_CALL, seq, STATUS_OK);
    for (uint32_t e = 0; e < count; e++) {
        const uint8_t *entry = &args[1u + 6u * e];
        (void)find_function(get_u16(entry), &ref);
        const uint32_t warmup = get_u16(&entry[2]);
        const uint32_t repeat = get_u16(&entry[4]);
        const uint32_t result_at = reply_used;
        int32_t result = 0;
        put_le(0, 4);
        for (uint32_t w = 0; w < warmup && result == 0; w++) {
            result = (int32_t)call_function(&ref);
        }
        /* Runs an entry stops before still get their ticks field (0), so every entry has the size
         * the host expects from its request. */
        for (uint32_t r = 0; r < repeat; r++) {
            uint64_t ticks = 0;
            if (result == 0) {
                const uint64_t start = mb_timer_now();
                result = (int32_t)call_function(&ref);
                ticks = mb_timer_now() - start;
            }
            put_le(ticks, 8);
        }
        for (unsigned i = 0; i < 4u; i++) {
            reply[result_at + i] = (uint8_t)((uint32_t)result >> (8u * i));
        }
    }
    finish_reply();
}

static void handle_run(uint16_t seq, const uint8_t *args, uint32_t argn)
{
    if (!expect_arguments(OP_RUN, seq, argn, 1)) {
        return;
    }
    const uint32_t m = args[0];
    if (m >= listed_models()) {
        begin_reply(OP_RUN, seq, STATUS_BAD_FUNCTION);
        put_text("model ");
        put_decimal(m);
        put_text(" is out of range (");
        put_decimal(listed_models());
        put_text(" models)");
        finish_reply();
        return;
    }
    const mb_rpc_model *model = &mb_rpc_models[m];
    const uint64_t start = mb_timer_now();
    const int32_t result = (int32_t)model->run(mb_rpc_arena + model->workspace_offset);
    const uint64_t ticks = mb_timer_now() - start;
    begin_reply(OP_RUN, seq, STATUS_OK);
    put_le((uint32_t)result, 4);
    put_le(ticks, 8);
    finish_reply();
}

/* ---- model blobs (the table runner) ---- */

static int table_runner_linked(uint8_t opcode, uint16_t seq)
{
    if (&mb_rpc_table_runner != NULL) {
        return 1;
    }
    begin_reply(opcode, seq, STATUS_UNKNOWN_OPCODE);
    put_text(opcode_name(opcode));
    put_text(": this firmware has no table runner (build it with a kernel set: --kernels-for)");
    finish_reply();
    return 0;
}

/* BLOB_LOAD: blob offset u32, blob bytes u32, workspace offset u32, workspace bytes u32 (all in
 * the arena). Checks the blob as a board's model slot is checked (mb_table_check: CRC-32,
 * SHA-256, format version, kernel-set id, bounds), then sets its state to the model's start. */
static void handle_blob_load(uint16_t seq, const uint8_t *args, uint32_t argn)
{
    if (!expect_arguments(OP_BLOB_LOAD, seq, argn, 16) || !table_runner_linked(OP_BLOB_LOAD, seq)) {
        return;
    }
    blob_loaded = 0;
    const uint32_t offset = get_u32(&args[0]);
    const uint32_t bytes = get_u32(&args[4]);
    const uint32_t ws_offset = get_u32(&args[8]);
    const uint32_t ws_bytes = get_u32(&args[12]);
    if (!range_ok(offset, bytes)) {
        bad_range(OP_BLOB_LOAD, seq, offset, bytes);
        return;
    }
    if (!range_ok(ws_offset, ws_bytes)) {
        bad_range(OP_BLOB_LOAD, seq, ws_offset, ws_bytes);
        return;
    }
    if ((uint64_t)offset < (uint64_t)ws_offset + ws_bytes && (uint64_t)ws_offset < (uint64_t)offset + bytes) {
        begin_reply(OP_BLOB_LOAD, seq, STATUS_BAD_ADDRESS);
        put_text("the blob and its workspace overlap");
        finish_reply();
        return;
    }
    int32_t bad_op = -1;
    const int status = mb_rpc_table_runner.check(mb_rpc_arena + offset, bytes, ws_bytes, &bad_op);
    if (status != 0) {
        begin_reply(OP_BLOB_LOAD, seq, STATUS_BAD_BLOB);
        put_text("model blob refused: ");
        put_text(mb_rpc_table_runner.status_name(status));
        if (bad_op >= 0) {
            put_text(" (op ");
            put_decimal((uint32_t)bad_op);
            put_text(")");
        }
        finish_reply();
        return;
    }
    mb_rpc_table_runner.reset_state(mb_rpc_arena + offset, mb_rpc_arena + ws_offset);
    blob_loaded = 1;
    blob_offset = offset;
    blob_bytes = bytes;
    blob_workspace_offset = ws_offset;
    begin_reply(OP_BLOB_LOAD, seq, STATUS_OK);
    finish_reply();
}

/* BLOB_RUN: runs the loaded blob once on its workspace (inputs already written) and times it. */
static void handle_blob_run(uint16_t seq, uint32_t argn)
{
    if (!expect_arguments(OP_BLOB_RUN, seq, argn, 0) || !table_runner_linked(OP_BLOB_RUN, seq)) {
        return;
    }
    if (!blob_loaded) {
        begin_reply(OP_BLOB_RUN, seq, STATUS_BAD_BLOB);
        put_text("no model blob loaded (BLOB_LOAD it first; a WRITE into it or a FREE unloads it)");
        finish_reply();
        return;
    }
    const uint64_t start = mb_timer_now();
    mb_rpc_table_runner.run(mb_rpc_arena + blob_offset, mb_rpc_arena + blob_workspace_offset);
    const uint64_t ticks = mb_timer_now() - start;
    begin_reply(OP_BLOB_RUN, seq, STATUS_OK);
    put_le(0, 4);
    put_le(ticks, 8);
    finish_reply();
}

static void handle_raw_receive(uint16_t seq, const uint8_t *args, uint32_t argn)
{
    if (!expect_arguments(OP_RAW_RECEIVE, seq, argn, 4)) {
        return;
    }
    raw_remaining = get_u32(args);
    raw_seq = seq;
    if (raw_remaining == 0u) {
        begin_reply(OP_RAW_RECEIVE, seq, STATUS_OK);
        finish_reply();
    }
}

static void handle_rpc(const uint8_t *body, uint32_t length)
{
    if (length < 3u) {
        return; /* no opcode and seq: nothing a reply could refer to */
    }
    const uint8_t opcode = body[0];
    const uint16_t seq = get_u16(&body[1]);
    const uint8_t *args = &body[3];
    const uint32_t argn = length - 3u;

    if (!is_idempotent(opcode) && cache_valid && cache_seq == seq && cache_opcode == opcode) {
        send_packet(reply, cache_length); /* a retransmission: its reply was lost */
        return;
    }
    switch (opcode) {
    case OP_INFO:
        handle_info(seq, args, argn);
        break;
    case OP_ALLOC:
        handle_alloc(seq, args, argn);
        break;
    case OP_FREE:
        handle_free(seq, args, argn);
        break;
    case OP_WRITE:
        /* A WRITE of 16 bytes or more took the streaming path: this one is too short for its
         * header. */
        begin_reply(OP_WRITE, seq, STATUS_BAD_MESSAGE);
        put_text("WRITE needs a ");
        put_decimal(WRITE_HEADER);
        put_text("-byte header, the packet has ");
        put_decimal(length + SESSION_HEADER);
        put_text(" bytes");
        finish_reply();
        break;
    case OP_READ:
        handle_read(seq, args, argn);
        break;
    case OP_CALL:
        handle_call(seq, args, argn);
        break;
    case OP_TIMED_CALL:
        handle_timed_call(seq, args, argn);
        break;
    case OP_RUN:
        handle_run(seq, args, argn);
        break;
    case OP_RESET:
        if (expect_arguments(OP_RESET, seq, argn, 0)) {
            begin_reply(OP_RESET, seq, STATUS_OK);
            finish_reply();
            mb_rpc_server_init();
        }
        break;
    case OP_RAW_RECEIVE:
        handle_raw_receive(seq, args, argn);
        break;
    case OP_PACKET_SIZE:
        handle_packet_size(seq, args, argn);
        break;
    case OP_BLOB_LOAD:
        handle_blob_load(seq, args, argn);
        break;
    case OP_BLOB_RUN:
        handle_blob_run(seq, argn);
        break;
    default:
        begin_reply(opcode, seq, STATUS_UNKNOWN_OPCODE);
        put_text("unknown opcode ");
        put_decimal(opcode);
        finish_reply();
        break;
    }
}

/* A whole packet (at most MB_RPC_MAX_PACKET bytes) whose CRC is good. */
static void handle_packet(const uint8_t *payload, uint32_t length)
{
    if (length < SESSION_HEADER) {
        return;
    }
    const uint16_t id = get_u16(&payload[1]);
    switch (payload[0]) {
    case TYPE_START_INIT:
        start_session(payload, length);
        break;
    case TYPE_NORMAL:
        if (session_id == 0u) {
            send_terminate(); /* tells a host that missed the boot message that we reset */
        } else if (id == session_id) {
            handle_rpc(&payload[SESSION_HEADER], length - SESSION_HEADER);
        }
        break;
    default:
        break; /* START_REPLY, TERMINATE and LOG are the device's to send; stale ids dropped */
    }
}

/* ---- WRITE streaming ---- */

/* The first 16 bytes of a NORMAL WRITE are in rx_buffer: decide, before any data byte arrives,
 * where the data goes. */
static void write_header_received(void)
{
    if (mb_crc16(rx_buffer, WRITE_HEADER_CRC_OFFSET) != get_u16(&rx_buffer[WRITE_HEADER_CRC_OFFSET])) {
        /* A corrupted header might point anywhere: skip without a word (the host retries). */
        rx_mode = RX_IDLE;
        mb_frame_decoder_skip(&decoder);
        return;
    }
    write_seq = get_u16(&rx_buffer[4]);
    write_offset = get_u32(&rx_buffer[6]);
    write_length = get_u32(&rx_buffer[10]);
    const uint16_t id = get_u16(&rx_buffer[1]);
    rx_mode = RX_DISCARD;
    if (session_id == 0u) {
        pending = PENDING_TERMINATE;
    } else if (id != session_id) {
        rx_mode = RX_IDLE; /* stale: dropped */
        mb_frame_decoder_skip(&decoder);
    } else if ((uint64_t)WRITE_HEADER + write_length != rx_length) {
        pending = PENDING_BAD_LENGTH;
    } else if (!range_ok(write_offset, write_length)) {
        pending = PENDING_BAD_ADDRESS;
    } else if (acked_write_valid && memcmp(rx_buffer, acked_write_header, WRITE_HEADER_CRC_OFFSET) == 0) {
        /* A repeat of the WRITE just acknowledged: its data is in place; read this copy to its
         * end unstored and, if it arrives intact, acknowledge it again. */
    } else {
        rx_mode = RX_STREAM;
        stream_offset = write_offset;
        if (blob_loaded && (uint64_t)write_offset < (uint64_t)blob_offset + blob_bytes &&
            blob_offset < (uint64_t)write_offset + write_length) {
            blob_loaded = 0; /* its bytes are no longer those BLOB_LOAD checked */
        }
    }
}

static void write_finished(void)
{
    switch (pending) {
    case PENDING_TERMINATE:
        send_terminate();
        break;
    case PENDING_BAD_LENGTH:
        begin_reply(OP_WRITE, write_seq, STATUS_BAD_MESSAGE);
        put_text("WRITE packet holds ");
        put_decimal(rx_length - WRITE_HEADER);
        put_text(" data bytes, its header says ");
        put_decimal(write_length);
        finish_reply();
        break;
    case PENDING_BAD_ADDRESS:
        bad_range(OP_WRITE, write_seq, write_offset, write_length);
        break;
    default:
        begin_reply(OP_WRITE, write_seq, STATUS_OK);
        finish_reply();
        memcpy(acked_write_header, rx_buffer, WRITE_HEADER_CRC_OFFSET);
        acked_write_valid = 1;
        break;
    }
}

/* ---- the receiver ---- */

static void packet_started(uint32_t length)
{
    rx_length = length;
    rx_used = 0;
    pending = PENDING_NONE;
    rx_mode = RX_BUFFER;
}

static void packet_byte(uint8_t byte)
{
    switch (rx_mode) {
    case RX_BUFFER:
        /* A packet longer than the buffer can only be a WRITE: drop anything else as soon as its
         * type or opcode shows it is not. */
        if (rx_length > MAX_PACKET && ((rx_used == 0u && byte != TYPE_NORMAL) ||
                                       (rx_used == SESSION_HEADER && byte != OP_WRITE))) {
            rx_mode = RX_IDLE;
            mb_frame_decoder_skip(&decoder);
            return;
        }
        if (rx_used >= sizeof rx_buffer) {
            rx_mode = RX_IDLE; /* cannot happen (long packets leave RX_BUFFER at 16 bytes) */
            mb_frame_decoder_skip(&decoder);
            return;
        }
        rx_buffer[rx_used++] = byte;
        if (rx_used == WRITE_HEADER && rx_buffer[0] == TYPE_NORMAL && rx_buffer[SESSION_HEADER] == OP_WRITE) {
            write_header_received();
        }
        break;
    case RX_STREAM:
        mb_rpc_arena[stream_offset++] = byte;
        break;
    default:
        break;
    }
}

static void packet_ended(void)
{
    const uint8_t mode = rx_mode;
    rx_mode = RX_IDLE;
    if (mode == RX_BUFFER) {
        handle_packet(rx_buffer, rx_used);
    } else if (mode == RX_STREAM || mode == RX_DISCARD) {
        write_finished();
    }
}

void mb_rpc_server_feed(uint8_t byte)
{
    if (raw_remaining > 0u) {
        raw_remaining--;
        if (raw_remaining == 0u) {
            begin_reply(OP_RAW_RECEIVE, raw_seq, STATUS_OK);
            finish_reply();
        }
        return;
    }
    switch (mb_frame_decode(&decoder, byte)) {
    case MB_FRAME_EV_START:
        packet_started(decoder.length);
        break;
    case MB_FRAME_EV_BYTE:
        packet_byte(decoder.byte);
        break;
    case MB_FRAME_EV_END_OK:
        packet_ended();
        break;
    case MB_FRAME_EV_END_BAD:
    case MB_FRAME_EV_ERROR:
    case MB_FRAME_EV_RESTART:
        rx_mode = RX_IDLE; /* whatever a WRITE already stored stays: the host's retry rewrites it */
        break;
    case MB_FRAME_EV_NONE:
    case MB_FRAME_EV_NOOP:
        break;
    }
}

void mb_rpc_server_init(void)
{
    mb_frame_decoder_init(&decoder);
    mb_frame_encoder_init(&encoder, mb_console_write);
    rx_mode = RX_IDLE;
    rx_length = 0;
    rx_used = 0;
    pending = PENDING_NONE;
    cache_valid = 0;
    acked_write_valid = 0;
    session_id = 0;
    packet_limit = MAX_PACKET;
    block_count = 0;
    blob_loaded = 0;
    raw_remaining = 0;
    const uint64_t now = mb_timer_now();
    nonce_salt = mix32(nonce_salt ^ (uint32_t)now ^ (uint32_t)(now >> 32));
    send_boot_sequence();
}

void mb_rpc_server_run(void)
{
    mb_rpc_server_init();
    for (;;) {
        mb_rpc_server_feed(mb_console_read());
    }
}
