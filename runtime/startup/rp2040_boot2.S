/* RP2040 second-stage loader (boot2) for the common QSPI flash (W25Q080 and the many parts that
 * answer the standard 03h read command), written for microbuild.
 *
 * The boot ROM reads the first 256 bytes of flash with 03h reads, checks the CRC32 in the last 4
 * (microbuild appends it: microbuild/firmware/image_steps/rp2040_boot2.py), copies them to the
 * top of SRAM5 (0x20041f00) and calls them. This code therefore runs from SRAM and must be
 * position-independent: PC-relative literals and branches only.
 *
 * Its one job: set up the flash interface (SSI) for execute-in-place, then start the firmware
 * whose vector table follows at 0x10000100. It uses the standard serial 03h read: every SPI
 * flash supports it in its reset state, so nothing has to be written to the flash's status
 * registers (quad mode needs the part-specific QE bit). The serial clock is clk_sys / 4.
 *
 * Entered from the boot ROM, lr is 0: start the firmware (VTOR, SP, reset handler from its
 * vector table). Called from code (lr != 0), e.g. to restore XIP after flash programming:
 * return there.
 */
    .syntax unified
    .cpu cortex-m0plus
    .thumb

/* SSI (Synopsys DW_apb_ssi) registers, RP2040 datasheet section 4.10.13. */
#define XIP_SSI_BASE    0x18000000
#define SSI_CTRLR0      0x00
#define SSI_CTRLR1      0x04
#define SSI_SSIENR      0x08
#define SSI_BAUDR       0x14
#define SSI_SPI_CTRLR0  0xf4

/* CTRLR0: SPI_FRF (bits 22:21) = 0 standard SPI; DFS_32 (20:16) = 31, 32-bit frames;
 * TMOD (9:8) = 3, EEPROM read: send instruction and address, then receive. */
#define CTRLR0_XIP      ((0 << 21) | (31 << 16) | (3 << 8))
/* SPI_CTRLR0: XIP_CMD (31:24) = 0x03 read data; INST_L (9:8) = 2, an 8-bit instruction;
 * ADDR_L (5:2) = 6, 24 address bits in units of 4; TRANS_TYPE (1:0) = 0, all serial. */
#define SPI_CTRLR0_XIP  ((0x03 << 24) | (2 << 8) | (6 << 2) | 0)
#define CLOCK_DIVIDER   4

#define FIRMWARE_VECTORS 0x10000100
#define M0PLUS_VTOR      0xe000ed08

    .section .text
    .global mb_rp2040_boot2
    .type mb_rp2040_boot2, %function
    .thumb_func
mb_rp2040_boot2:
    push {lr}
    ldr r3, =XIP_SSI_BASE
    movs r0, #0
    str r0, [r3, #SSI_SSIENR]          /* the SSI can only be set up while disabled */
    movs r0, #CLOCK_DIVIDER
    str r0, [r3, #SSI_BAUDR]
    ldr r0, =CTRLR0_XIP
    str r0, [r3, #SSI_CTRLR0]
    movs r0, #0
    str r0, [r3, #SSI_CTRLR1]          /* NDF: the XIP block sets the frame count per access */
    ldr r1, =SPI_CTRLR0_XIP
    ldr r2, =(XIP_SSI_BASE + SSI_SPI_CTRLR0)  /* offset 0xf4 is past str's immediate range */
    str r1, [r2]
    movs r0, #1
    str r0, [r3, #SSI_SSIENR]          /* enabled: the XIP window at 0x10000000 now reads flash */

    pop {r0}
    cmp r0, #0
    beq start_firmware
    bx r0

start_firmware:
    ldr r0, =FIRMWARE_VECTORS
    ldr r1, =M0PLUS_VTOR
    str r0, [r1]
    ldmia r0!, {r1, r2}                /* initial SP, reset handler */
    msr msp, r1
    bx r2

    .ltorg
    .size mb_rp2040_boot2, . - mb_rp2040_boot2
