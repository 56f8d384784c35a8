/* The table executor's validator and runner (runtime/include/microbuild/table.h). The byte
 * layout is docs/model-blob.md's; every multi-byte field is little-endian (read with one load on
 * a little-endian target, byte by byte elsewhere), so a blob reads the same on any target. */
#include <string.h>

#include "microbuild/table.h"

/* Argument kinds (microbuild/blob/format.py): an offset into a section, or a value. */
enum {
    ARG_NULL = 0, ARG_WORKSPACE = 1, ARG_WEIGHTS = 2, ARG_PARAMS = 3, ARG_INT = 4, ARG_F32 = 5
};

/* Header field offsets (microbuild/blob/format.py's _HEADER). */
enum {
    H_VERSION = 8, H_HEADER_BYTES = 10, H_KERNEL_SET = 12, H_TOTAL = 16, H_CRC = 20, H_SHA256 = 24,
    H_WORKSPACE = 80, H_OP_COUNT = 84, H_OPS = 88, H_OPS_BYTES = 92, H_PARAMS = 96,
    H_PARAMS_BYTES = 100, H_WEIGHTS = 104, H_WEIGHTS_BYTES = 108, H_IO = 112, H_INPUTS = 116,
    H_OUTPUTS = 118, H_POINTER_BYTES = 120, H_STATE_BYTES = 128, H_STATE_IMAGE = 132
};

/* An op table entry: kernel id u32, model op u16, argument count u16, kernel index u32, then
 * per argument kind u32 and value u32. */
enum { OP_BYTES = 12 };

static const uint8_t magic[8] = {'M', 'B', 'M', 'O', 'D', 'E', 'L', 0};

static uint32_t u16(const uint8_t *p) { return (uint32_t)p[0] | ((uint32_t)p[1] << 8); }
static uint32_t u32(const uint8_t *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* One load on a little-endian target (the runner reads every op's fields on every run). */
    uint32_t value;
    memcpy(&value, p, sizeof value);
    return value;
#else
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
#endif
}

/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32), bit by bit: checked once per blob load, so
 * no 1 KiB table in flash for it. */
static uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++) {
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
        }
    }
    return ~crc;
}

/* SHA-256 (FIPS 180-4), for the blob's whole-content hash: the CRC-32 catches a torn write or a
 * flipped bit cheaply, the SHA-256 a blob whose bytes were changed and its CRC recomputed. */
static const uint32_t sha256_k[64] = {
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u,
    0xab1c5ed5u, 0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu,
    0x9bdc06a7u, 0xc19bf174u, 0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu,
    0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau, 0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u,
    0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u, 0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu,
    0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u, 0xa2bfe8a1u, 0xa81a664bu,
    0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u, 0x19a4c116u,
    0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,
    0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u,
    0xc67178f2u};

static uint32_t ror(uint32_t x, unsigned n) { return (x >> n) | (x << (32u - n)); }

static void sha256_block(uint32_t h[8], const uint8_t block[64])
{
    uint32_t w[64];
    for (unsigned i = 0; i < 16u; i++) {
        w[i] = ((uint32_t)block[4 * i] << 24) | ((uint32_t)block[4 * i + 1] << 16) |
               ((uint32_t)block[4 * i + 2] << 8) | (uint32_t)block[4 * i + 3];
    }
    for (unsigned i = 16; i < 64u; i++) {
        const uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        const uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (unsigned i = 0; i < 64u; i++) {
        const uint32_t t1 = hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) +
                            sha256_k[i] + w[i];
        const uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

/* The SHA-256 of `data`, with bytes [zero_at, zero_at + zero_bytes) read as zero (the blob's
 * own CRC and SHA fields). */
static void sha256_masked(const uint8_t *data, size_t size, size_t zero_at, size_t zero_bytes,
                          uint8_t digest[32])
{
    uint32_t h[8] = {0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
                     0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u};
    uint8_t block[64];
    size_t at = 0;
    /* Whole blocks, then the tail with the 0x80 marker and the bit length (one or two blocks). */
    for (;;) {
        const size_t n = size - at < 64u ? size - at : 64u;
        for (size_t i = 0; i < n; i++) {
            const size_t pos = at + i;
            block[i] = (pos >= zero_at && pos - zero_at < zero_bytes) ? 0u : data[pos];
        }
        at += n;
        if (n == 64u) {
            sha256_block(h, block);
            continue;
        }
        memset(block + n, 0, 64u - n);
        block[n] = 0x80u;
        if (n >= 56u) {
            sha256_block(h, block);
            memset(block, 0, 64u);
        }
        const uint64_t bits = (uint64_t)size * 8u;
        for (unsigned i = 0; i < 8u; i++) {
            block[63u - i] = (uint8_t)(bits >> (8u * i));
        }
        sha256_block(h, block);
        break;
    }
    for (unsigned i = 0; i < 32u; i++) {
        digest[i] = (uint8_t)(h[i / 4u] >> (24u - 8u * (i % 4u)));
    }
}

void mb_table_sha256(const uint8_t *data, size_t size, uint8_t digest[32])
{
    sha256_masked(data, size, 0u, 0u, digest);
}

const char *mb_table_status_name(mb_table_status status)
{
    switch (status) {
    case MB_TABLE_OK: return "ok";
    case MB_TABLE_TRUNCATED: return "truncated";
    case MB_TABLE_BAD_MAGIC: return "not a model blob";
    case MB_TABLE_BAD_VERSION: return "another format version";
    case MB_TABLE_MISALIGNED: return "not 16-byte aligned";
    case MB_TABLE_BAD_CRC: return "CRC-32 mismatch";
    case MB_TABLE_FOREIGN_KERNELS: return "packed for another kernel set";
    case MB_TABLE_BAD_POINTER_SIZE: return "packed for another pointer size";
    case MB_TABLE_WORKSPACE: return "needs more workspace";
    case MB_TABLE_BAD_LAYOUT: return "section or argument out of bounds";
    case MB_TABLE_UNKNOWN_KERNEL: return "calls a kernel this firmware lacks";
    case MB_TABLE_BAD_SHA256: return "SHA-256 mismatch";
    }
    return "unknown status";
}

/* [offset, offset + bytes) inside [0, limit), without overflow. */
static int inside(uint32_t offset, uint32_t bytes, uint32_t limit)
{
    return offset <= limit && bytes <= limit - offset;
}

/* A parameter block at `at` in the blob's parameter section: in bounds, its pointer fields
 * inside the block and pointing inside the section their kind names (a nested parameter block
 * must have no pointer fields: `nested`). Returns the bytes the runner copies for it (0 when it
 * is passed in place), or -1 when it is malformed. */
static int32_t check_params(const uint8_t *blob, uint32_t at, uint32_t workspace, int nested)
{
    const uint32_t base = u32(blob + H_PARAMS), limit = u32(blob + H_PARAMS_BYTES);
    const uint32_t pointer = blob[H_POINTER_BYTES], weights = u32(blob + H_WEIGHTS_BYTES);
    if ((at & 7u) != 0u || !inside(at, 8u, limit)) {
        return -1;
    }
    const uint32_t bytes = u32(blob + base + at), fields = u32(blob + base + at + 4u);
    if (fields > (limit - at - 8u) / 12u || !inside(at + 8u + 12u * fields, bytes, limit) ||
        (nested && fields != 0u)) {
        return -1;
    }
    for (uint32_t f = 0; f < fields; f++) {
        const uint8_t *field = blob + base + at + 8u + 12u * f;
        const uint32_t kind = u32(field + 4), target = u32(field + 8);
        if (!inside(u32(field), pointer, bytes)) {
            return -1;
        }
        if (kind == ARG_PARAMS) {
            if (check_params(blob, target, workspace, 1) != 0) {
                return -1;
            }
        } else if (!((kind == ARG_WEIGHTS && target < weights) ||
                     (kind == ARG_WORKSPACE && target < workspace))) {
            return -1;
        }
    }
    return fields == 0u ? 0 : (int32_t)((bytes + 7u) & ~7u);
}

mb_table_status mb_table_check(const uint8_t *blob, size_t size, size_t workspace_bytes,
                               int32_t *bad_op)
{
    if (bad_op != NULL) {
        *bad_op = -1;
    }
    if (size < MB_TABLE_HEADER_BYTES) {
        return MB_TABLE_TRUNCATED;
    }
    if (memcmp(blob, magic, sizeof magic) != 0) {
        return MB_TABLE_BAD_MAGIC;
    }
    if (u16(blob + H_VERSION) != MB_TABLE_FORMAT_VERSION ||
        u16(blob + H_HEADER_BYTES) != MB_TABLE_HEADER_BYTES) {
        return MB_TABLE_BAD_VERSION;
    }
    const uint32_t total = u32(blob + H_TOTAL);
    if (total < MB_TABLE_HEADER_BYTES || size < total) {
        return MB_TABLE_TRUNCATED;
    }
    if (((uintptr_t)blob & 15u) != 0u) {
        return MB_TABLE_MISALIGNED;
    }
    static const uint8_t zero[4] = {0, 0, 0, 0};
    uint32_t crc = crc32_update(0u, blob, H_CRC);
    crc = crc32_update(crc, zero, 4u);
    crc = crc32_update(crc, blob + H_CRC + 4u, total - H_CRC - 4u);
    if (crc != u32(blob + H_CRC)) {
        return MB_TABLE_BAD_CRC;
    }
    uint8_t digest[32];
    sha256_masked(blob, total, H_CRC, 4u + 32u, digest);
    if (memcmp(digest, blob + H_SHA256, 32u) != 0) {
        return MB_TABLE_BAD_SHA256;
    }
    if (u32(blob + H_KERNEL_SET) != mb_table_kernel_set_id) {
        return MB_TABLE_FOREIGN_KERNELS;
    }
    if (blob[H_POINTER_BYTES] != sizeof(void *)) {
        return MB_TABLE_BAD_POINTER_SIZE;
    }
    const uint32_t ws = u32(blob + H_WORKSPACE);
    if (ws > workspace_bytes) {
        return MB_TABLE_WORKSPACE;
    }
    const uint32_t n_io = u16(blob + H_INPUTS) + u16(blob + H_OUTPUTS);
    const uint32_t io = u32(blob + H_IO), ops = u32(blob + H_OPS);
    const uint32_t ops_bytes = u32(blob + H_OPS_BYTES);
    const uint32_t weights = u32(blob + H_WEIGHTS);
    if (!inside(io, 8u * n_io, total) || !inside(ops, ops_bytes, total) ||
        !inside(u32(blob + H_PARAMS), u32(blob + H_PARAMS_BYTES), total) ||
        !inside(weights, u32(blob + H_WEIGHTS_BYTES), total) || (weights & 15u) != 0u) {
        return MB_TABLE_BAD_LAYOUT;
    }
    const uint32_t state = u32(blob + H_STATE_BYTES);
    if (state > ws || (state & 15u) != 0u ||
        (state != 0u && !inside(u32(blob + H_STATE_IMAGE), state, u32(blob + H_WEIGHTS_BYTES)))) {
        return MB_TABLE_BAD_LAYOUT;
    }
    for (uint32_t k = 0; k < n_io; k++) {
        if (!inside(u32(blob + io + 8u * k), u32(blob + io + 8u * k + 4u), ws)) {
            return MB_TABLE_BAD_LAYOUT;
        }
    }
    uint32_t at = ops;
    const uint32_t end = ops + ops_bytes, count = u32(blob + H_OP_COUNT);
    for (uint32_t i = 0; i < count; i++) {
        if (end - at < OP_BYTES) {
            return MB_TABLE_BAD_LAYOUT;
        }
        const uint32_t n = u16(blob + at + 6u), index = u32(blob + at + 8u);
        if (bad_op != NULL) {
            *bad_op = (int32_t)u16(blob + at + 4u);
        }
        /* The runner calls kernels by index: the entry there must be the kernel the op names. */
        if (index >= mb_table_kernel_count || mb_table_kernels[index].id != u32(blob + at)) {
            return MB_TABLE_UNKNOWN_KERNEL;
        }
        const mb_table_kernel *kernel = &mb_table_kernels[index];
        if (n != kernel->arg_count || n > MB_TABLE_MAX_ARGS || (end - at - OP_BYTES) / 8u < n) {
            return MB_TABLE_BAD_LAYOUT;
        }
        uint32_t copied = 0;
        for (uint32_t k = 0; k < n; k++) {
            const uint32_t kind = u32(blob + at + OP_BYTES + 8u * k);
            const uint32_t value = u32(blob + at + OP_BYTES + 4u + 8u * k);
            int32_t copy = 0;
            if (kind == ARG_NULL) {
                copy = value == 0u ? 0 : -1;
            } else if (kind == ARG_WORKSPACE) {
                copy = value < ws ? 0 : -1;
            } else if (kind == ARG_WEIGHTS) {
                copy = value < u32(blob + H_WEIGHTS_BYTES) ? 0 : -1;
            } else if (kind == ARG_PARAMS) {
                copy = check_params(blob, value, ws, 0);
            } else if (kind == ARG_INT || kind == ARG_F32) {
                copy = 0;
            } else {
                copy = -1;
            }
            if (copy < 0 || (uint32_t)copy > MB_TABLE_PARAMS_BYTES - copied) {
                return MB_TABLE_BAD_LAYOUT;
            }
            copied += (uint32_t)copy;
        }
        at += OP_BYTES + 8u * n;
    }
    if (bad_op != NULL) {
        *bad_op = -1;
    }
    return MB_TABLE_OK;
}

uint32_t mb_table_input_count(const uint8_t *blob) { return u16(blob + H_INPUTS); }
uint32_t mb_table_output_count(const uint8_t *blob) { return u16(blob + H_OUTPUTS); }
uint32_t mb_table_workspace_bytes(const uint8_t *blob) { return u32(blob + H_WORKSPACE); }
uint32_t mb_table_state_bytes(const uint8_t *blob) { return u32(blob + H_STATE_BYTES); }

void mb_table_reset_state(const uint8_t *blob, uint8_t *workspace)
{
    const uint32_t state = u32(blob + H_STATE_BYTES);
    memcpy(workspace + u32(blob + H_WORKSPACE) - state,
           blob + u32(blob + H_WEIGHTS) + u32(blob + H_STATE_IMAGE), state);
}

void mb_table_io(const uint8_t *blob, uint32_t index, uint32_t *offset, uint32_t *bytes)
{
    const uint8_t *entry = blob + u32(blob + H_IO) + 8u * index;
    *offset = u32(entry);
    *bytes = u32(entry + 4);
}

/* Resolve one op's arguments (the op table entry at `op`) into args[], for a workspace at
 * `workspace`: offsets become addresses, numbers travel in the pointers' bits, and a parameter
 * block with pointer fields is copied to `copy` and its fields set (one without is passed in
 * place, in the blob). Returns the bytes of `copy` used (8-aligned). The one resolver behind
 * both mb_table_run (every run) and mb_table_prepare (once per load). */
static uint32_t resolve_op(const uint8_t *blob, const uint8_t *op, uint8_t *workspace,
                           void **args, uint8_t *copy)
{
    const uint8_t *params = blob + u32(blob + H_PARAMS);
    const uint8_t *weights = blob + u32(blob + H_WEIGHTS);
    const uint32_t n = u16(op + 6);
    uint32_t used = 0;
    for (uint32_t k = 0; k < n; k++) {
        const uint8_t *arg = op + OP_BYTES + 8u * k;
        const uint32_t value = u32(arg + 4);
        switch (u32(arg)) {
        case ARG_WORKSPACE: args[k] = workspace + value; break;
        case ARG_WEIGHTS: args[k] = (void *)(uintptr_t)(weights + value); break;
        case ARG_PARAMS: {
            const uint8_t *block = params + value;
            const uint32_t bytes = u32(block), fields = u32(block + 4);
            const uint8_t *data = block + 8u + 12u * fields;
            if (fields == 0u) {  /* no pointers: passed in place, in the blob */
                args[k] = (void *)(uintptr_t)data;
                break;
            }
            memcpy(copy + used, data, bytes);
            for (uint32_t f = 0; f < fields; f++) {
                const uint8_t *field = block + 8u + 12u * f;
                const uint32_t kind = u32(field + 4), value_at = u32(field + 8);
                /* A nested block has no pointer fields (checked): its data in place. */
                const uint8_t *target =
                    kind == ARG_WEIGHTS ? weights + value_at
                    : kind == ARG_WORKSPACE ? workspace + value_at
                    : params + value_at + 8u;
                memcpy(copy + used + u32(field), &target, sizeof target);
            }
            args[k] = copy + used;
            used += (bytes + 7u) & ~7u;
            break;
        }
        case ARG_INT: args[k] = (void *)(intptr_t)(int32_t)value; break;
        case ARG_F32: args[k] = (void *)(uintptr_t)value; break;
        default: args[k] = NULL; break;
        }
    }
    return used;
}

/* The bytes of the parameter copies an op's resolved arguments take (resolve_op's `used`). */
static uint32_t op_copy_bytes(const uint8_t *blob, const uint8_t *op)
{
    const uint8_t *params = blob + u32(blob + H_PARAMS);
    uint32_t bytes = 0;
    for (uint32_t k = 0; k < u16(op + 6); k++) {
        const uint8_t *arg = op + OP_BYTES + 8u * k;
        if (u32(arg) == ARG_PARAMS && u32(params + u32(arg + 4) + 4u) != 0u) {
            bytes += (u32(params + u32(arg + 4)) + 7u) & ~7u;
        }
    }
    return bytes;
}

/* Parameter structs with pointer fields are copied here, their pointers set, for one op. */
static uint64_t params_copy[MB_TABLE_PARAMS_BYTES / 8u];

void mb_table_run(const uint8_t *blob, uint8_t *workspace)
{
    const uint32_t count = u32(blob + H_OP_COUNT);
    const uint8_t *op = blob + u32(blob + H_OPS);
    void *args[MB_TABLE_MAX_ARGS];
    for (uint32_t i = 0; i < count; i++) {
        resolve_op(blob, op, workspace, args, (uint8_t *)params_copy);
        mb_table_kernels[u32(op + 8)].call(args);
        op += OP_BYTES + 8u * u16(op + 6);
    }
}

/* A prepared model's memory: the op records, then every op's argument array, then (8-aligned)
 * the parameter copies. */
static size_t round8(size_t n) { return (n + 7u) & ~(size_t)7u; }

size_t mb_table_prepared_bytes(const uint8_t *blob)
{
    const uint32_t count = u32(blob + H_OP_COUNT);
    const uint8_t *op = blob + u32(blob + H_OPS);
    size_t args = 0, copies = 0;
    for (uint32_t i = 0; i < count; i++) {
        args += u16(op + 6);
        copies += op_copy_bytes(blob, op);
        op += OP_BYTES + 8u * u16(op + 6);
    }
    return round8(count * sizeof(mb_table_op_record) + args * sizeof(void *)) + copies;
}

int mb_table_prepare(const uint8_t *blob, uint8_t *workspace, void *memory, size_t bytes,
                     mb_table_prepared *prepared)
{
    if (((uintptr_t)memory & 7u) != 0u || bytes < mb_table_prepared_bytes(blob)) {
        return -1;
    }
    const uint32_t count = u32(blob + H_OP_COUNT);
    const uint8_t *op = blob + u32(blob + H_OPS);
    mb_table_op_record *records = (mb_table_op_record *)memory;
    void **args = (void **)(records + count);
    size_t arg_count = 0;
    for (uint32_t i = 0; i < count; i++) {
        arg_count += u16(op + 6);
        op += OP_BYTES + 8u * u16(op + 6);
    }
    uint8_t *copy = (uint8_t *)memory +
                    round8(count * sizeof(mb_table_op_record) + arg_count * sizeof(void *));
    op = blob + u32(blob + H_OPS);
    for (uint32_t i = 0; i < count; i++) {
        records[i].call = mb_table_kernels[u32(op + 8)].call;
        records[i].args = args;
        copy += resolve_op(blob, op, workspace, args, copy);
        args += u16(op + 6);
        op += OP_BYTES + 8u * u16(op + 6);
    }
    prepared->ops = records;
    prepared->op_count = count;
    return 0;
}

void mb_table_run_prepared(const mb_table_prepared *prepared)
{
    /* Per op: two loads and an indirect call; the thunk loads its ready arguments. */
    const mb_table_op_record *op = prepared->ops, *const end = op + prepared->op_count;
    for (; op != end; op++) {
        op->call(op->args);
    }
}
