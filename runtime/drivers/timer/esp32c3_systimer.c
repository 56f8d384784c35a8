/* Timer on the ESP32-C3's system timer (SYSTIMER at 0x60023000), counter unit 0: 52 bits at
 * 16 MHz whatever the CPU clock, so timer.frequency_hz is 16000000. The ESP32-C3's core has no
 * standard mcycle CSR (reading it traps), hence this driver rather than timer/mcycle.c.
 *
 * Register offsets from the ESP32-C3 Technical Reference Manual, system timer chapter:
 *   SYSTIMER_CONF_REG            0x00  CLK_EN bit 31, TIMER_UNIT0_WORK_EN bit 30
 *   SYSTIMER_UNIT0_OP_REG        0x04  TIMER_UNIT0_UPDATE bit 30 (write: latch the count),
 *                                      TIMER_UNIT0_VALUE_VALID bit 29 (the latch is done)
 *   SYSTIMER_UNIT0_VALUE_HI_REG  0x40  latched count, bits 51:32
 *   SYSTIMER_UNIT0_VALUE_LO_REG  0x44  latched count, bits 31:0
 * Not verified on hardware here (no board attached).
 */
#include "mb_board_config.h"
#include "microbuild/platform.h"

#define SYSTIMER_BASE 0x60023000u
#define SYSTIMER_REG(offset) (*(volatile uint32_t *)(uintptr_t)(SYSTIMER_BASE + (offset)))
#define SYSTIMER_CONF           SYSTIMER_REG(0x00u)
#define SYSTIMER_UNIT0_OP       SYSTIMER_REG(0x04u)
#define SYSTIMER_UNIT0_VALUE_HI SYSTIMER_REG(0x40u)
#define SYSTIMER_UNIT0_VALUE_LO SYSTIMER_REG(0x44u)

#define CONF_CLK_EN            (1u << 31)
#define CONF_UNIT0_WORK_EN     (1u << 30)
#define UNIT0_OP_UPDATE        (1u << 30)
#define UNIT0_OP_VALUE_VALID   (1u << 29)

void mb_timer_init(void)
{
    SYSTIMER_CONF |= CONF_CLK_EN | CONF_UNIT0_WORK_EN;
}

uint64_t mb_timer_now(void)
{
    SYSTIMER_UNIT0_OP = UNIT0_OP_UPDATE;
    while ((SYSTIMER_UNIT0_OP & UNIT0_OP_VALUE_VALID) == 0u) {
    }
    const uint32_t high = SYSTIMER_UNIT0_VALUE_HI & 0xFFFFFu;
    const uint32_t low = SYSTIMER_UNIT0_VALUE_LO;
    return ((uint64_t)high << 32) | low;
}
