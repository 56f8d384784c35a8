/* Console text helpers: firmware prints without printf (no libc formatting code linked). */
#include "microbuild/platform.h"

void mb_print(const char *text)
{
    size_t length = 0;
    while (text[length] != '\0') {
        length++;
    }
    mb_console_write(text, length);
}

void mb_print_u64(uint64_t value)
{
    char digits[20]; /* 2^64 - 1 has 20 digits */
    size_t start = sizeof digits;
    do {
        digits[--start] = (char)('0' + (int)(value % 10u));
        value /= 10u;
    } while (value != 0u);
    mb_console_write(&digits[start], sizeof digits - start);
}

void mb_print_i32(int32_t value)
{
    if (value < 0) {
        mb_console_write("-", 1);
        /* Negate in unsigned arithmetic: -INT32_MIN does not fit in int32_t. */
        mb_print_u64((uint64_t)(0u - (uint32_t)value));
    } else {
        mb_print_u64((uint64_t)value);
    }
}

void mb_print_hex(const void *data, size_t length)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *bytes = (const uint8_t *)data;
    char text[64];
    size_t used = 0;
    for (size_t i = 0; i < length; i++) {
        text[used++] = hex[bytes[i] >> 4];
        text[used++] = hex[bytes[i] & 0xFu];
        if (used == sizeof text) {
            mb_console_write(text, used);
            used = 0;
        }
    }
    mb_console_write(text, used);
}
