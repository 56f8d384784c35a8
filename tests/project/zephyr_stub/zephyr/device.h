#ifndef MB_TEST_ZEPHYR_DEVICE_H
#define MB_TEST_ZEPHYR_DEVICE_H
#include <stdbool.h>
struct device {
    const char *name;
};
bool device_is_ready(const struct device *dev);
/* One level of indirection so that DT_CHOSEN(...) expands first. */
#define MB_TEST_DEVICE(node_id) (&mb_test_device_##node_id)
#define DEVICE_DT_GET(node_id) MB_TEST_DEVICE(node_id)
#endif
