/* libFuzzer entry point for the frame decoder and the RPC server on the fake board (built with
 * clang -fsanitize=fuzzer,address,undefined). The first input byte picks how the rest is used:
 *
 *   even: raw wire bytes, fed to a checked decoder and to a fresh server;
 *   odd:  records [flags u8][length u8][body...] that the harness wraps into NORMAL packets of an
 *         open session (so the fuzzer reaches the RPC handlers without guessing the session id
 *         and CRCs): flags bit 0 fixes a WRITE's header CRC, bit 1 spoils the packet CRC, bit 2
 *         sends the body unframed (RAW_RECEIVE data), bit 3 uses a stale session id.
 *
 * Invariants: no sanitizer report, the arena's guard zone intact, the device's output always
 * well-formed, and no payload with a wrong CRC delivered. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static checked_decoder raw_decoder;
static device_view view;

static void feed(const uint8_t *bytes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        mb_rpc_server_feed(bytes[i]);
    }
    device_view_scan(&view, NULL);
    CHECK(fake_guard_ok());
}

static void feed_payload(const uint8_t *payload, uint32_t length, uint16_t crc_xor)
{
    static uint8_t wire[2 * 300 + 16];
    feed(wire, ref_frame(payload, length, crc_xor, wire));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    fake_models_init();
    fake_output_clear();
    device_view_init(&view);
    mb_rpc_server_init();
    device_view_scan(&view, NULL);

    if ((data[0] & 1u) == 0) {
        checked_init(&raw_decoder);
        for (size_t i = 1; i < size; i++) {
            (void)checked_feed(&raw_decoder, data[i]);
        }
        feed(data + 1, size - 1);
        return 0;
    }

    const uint8_t start[] = {1, 0x00, 0x5A, 1};
    feed_payload(start, sizeof start, 0);
    CHECK(view.session != 0);
    const uint16_t session = view.session;

    size_t at = 1;
    while (at + 2 <= size) {
        const uint8_t flags = data[at];
        size_t length = data[at + 1];
        at += 2;
        if (length > size - at) {
            length = size - at;
        }
        const uint8_t *body = data + at;
        at += length;
        if (flags & 4u) {
            feed(body, length);
            continue;
        }
        uint8_t payload[3 + 255];
        payload[0] = 5;
        wr(&payload[1], (flags & 8u) ? (uint16_t)(session ^ 0x0101u) : session, 2);
        memcpy(&payload[3], body, length);
        const uint32_t n = 3 + (uint32_t)length;
        if (n >= 7 && payload[3] == 7) {
            /* TIMED_CALL: keep warmups and repeats small, or a few inputs would take seconds. */
            for (uint32_t warmup = 8 + 2; warmup + 1 < n; warmup += 6) {
                payload[warmup] &= 0x07u;
                payload[warmup + 1] = 0;
            }
        }
        if ((flags & 1u) && n >= 16) {
            wr(&payload[14], ref_crc(payload, 14), 2);
        }
        feed_payload(payload, n, (flags & 2u) ? 0x8001u : 0u);
    }
    return 0;
}
