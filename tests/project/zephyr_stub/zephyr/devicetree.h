#ifndef MB_TEST_ZEPHYR_DEVICETREE_H
#define MB_TEST_ZEPHYR_DEVICETREE_H
#include "zephyr/device.h"
/* DT_CHOSEN(zephyr_console) names the stand-in device mb_test_device_zephyr_console. */
#define DT_CHOSEN(prop) prop
extern const struct device mb_test_device_zephyr_console;
#endif
