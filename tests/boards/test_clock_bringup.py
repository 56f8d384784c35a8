"""Clock bring-up of the real boards, checked against the reference manuals' register maps.

No board is attached here, so each board's `init:` snippet is compiled as microbuild compiles it
and executed (Unicorn) against a model of the registers it may touch: addresses, reset values and
the hardware's answers, from
- RM0385 (STM32F75xxx/74xxx): RCC 0x40023800 (section 5.3), PWR 0x40007000 (4.4), FLASH_ACR
  0x40023C00 (3.7.1), GPIO (6.4);
- RM0433 (STM32H742/743/750/753): PWR 0x58024800 (6.8), RCC 0x58024400 (8.7), FLASH_ACR
  0x52002000 (4.9.1), GPIO 0x58020000 (11.4), flash wait states (table 17);
- the RP2040 datasheet: XOSC 0x40024000 (2.16.7), CLOCKS 0x40008000 (2.15.7), RESETS 0x4000C000
  (2.14.3), PLL_SYS 0x40028000 (2.18.4), IO_BANK0 0x40014000 (2.19.6), atomic register aliases
  (2.1.2);
- the nRF52840 Product Specification: CLOCK 0x40000000 (6.4.7);
- the Armv7-M Architecture Reference Manual / Cortex-M7 TRM: SCB CCR 0xE000ED14 (IC bit 17, DC bit
  16), CCSIDR 0xE000ED80, CSSELR 0xE000ED84, ICIALLU 0xE000EF50, DCISW 0xE000EF60.
A wrong address faults the run; the tests then decode the final register values into frequencies
(which must equal the board's cpu.clock_hz, timer and UART clock) and check the order the manuals
ask for (voltage and wait states before the clock goes up, PLL configured while off, glitchless
switches, cache invalidated before it is enabled).
"""

from __future__ import annotations

import re

import pytest

from microbuild.boards import load_board
from microbuild.firmware import board_files

from register_model_support import Access, RegisterModel, run_init

MHZ = 1_000_000


# --- Cortex-M7 system control block: caches -------------------------------------------------

CCR, CCSIDR, CSSELR, ICIALLU, DCISW = "SCB_CCR", "SCB_CCSIDR", "SCB_CSSELR", "ICIALLU", "DCISW"
CCR_DC, CCR_IC = 1 << 16, 1 << 17


def scb_registers(ccr_reset: int) -> dict[int, tuple[str, int]]:
    return {0xE000ED14: (CCR, ccr_reset), 0xE000ED80: (CCSIDR, 0), 0xE000ED84: (CSSELR, 0),
            0xE000EF50: (ICIALLU, 0), 0xE000EF60: (DCISW, 0)}


class CortexM7Caches:
    """Mix-in: CCSIDR answers for the level-1 data cache of ``dcache_sets`` sets (4 ways, 32-byte
    lines: NumSets-1 in [27:13], Associativity-1 in [12:3], LineSize log2(words)-2 in [2:0])."""

    dcache_sets = 32

    def ccsidr(self) -> int:
        assert self.values[CSSELR] == 0, "CCSIDR read without selecting the L1 data cache"
        return ((self.dcache_sets - 1) << 13) | (3 << 3) | 1


def check_m7_caches(model: RegisterModel, sets: int) -> None:
    trace = model.trace
    assert model.values[CCR] & CCR_IC and model.values[CCR] & CCR_DC, "caches left off"
    # I-cache: invalidated, DSB + ISB, then enabled, then DSB + ISB.
    ic_on = model.first(CCR, predicate=lambda v: v & CCR_IC)
    invalidate = model.first(ICIALLU)
    kinds = [a.name for a in trace[invalidate:ic_on] if a.kind == "b"]
    assert invalidate < ic_on and kinds[-2:] == ["DSB", "ISB"], trace[invalidate:ic_on + 1]
    # D-cache: every set of every way invalidated by set/way before DC is set.
    dc_on = model.first(CCR, predicate=lambda v: v & CCR_DC)
    done = {a.value for a in trace[:dc_on] if a.kind == "w" and a.name == DCISW}
    assert done == {(way << 30) | (s << 5) for s in range(sets) for way in range(4)}
    assert any(a.kind == "b" and a.name == "DSB" for a in trace[model.last(DCISW):dc_on])
    after = [a.name for a in trace[dc_on + 1:] if a.kind == "b"][:2]
    assert after == ["DSB", "ISB"]


def stm32_prescaler(bits: int, width: int) -> int:
    """RM0385 5.3.3 and RM0433 8.7.8-10 encode them alike: HPRE/D1CPRE (4 bits: 0xxx /1, 1000 /2 ... 1111 /512, skipping /32) and the
    APB prescalers (3 bits: 0xx /1, 100 /2 ... 111 /16)."""
    if width == 3:
        return 1 if bits < 4 else 1 << (bits - 3)
    return 1 if bits < 8 else [2, 4, 8, 16, 64, 128, 256, 512][bits - 8]


# --- STM32F746 (RM0385) -------------------------------------------------------------------------

class Stm32F7(CortexM7Caches, RegisterModel):
    """RCC, PWR, FLASH, GPIOA/B/D and SCB of the STM32F74x. A PWR or GPIO register whose bus clock
    is off ignores writes, as the hardware does."""

    dcache_sets = 32  # 4 KiB data cache

    def __init__(self):
        registers = {
            0x40023800: ("RCC_CR", 0x00000083), 0x40023804: ("RCC_PLLCFGR", 0x24003010),
            0x40023808: ("RCC_CFGR", 0), 0x40023830: ("RCC_AHB1ENR", 0x00100000),
            0x40023840: ("RCC_APB1ENR", 0), 0x40023844: ("RCC_APB2ENR", 0),
            0x40007000: ("PWR_CR1", 0x0000C000), 0x40007004: ("PWR_CSR1", 0),
            0x40023C00: ("FLASH_ACR", 0),
        }
        for port, base, moder in (("A", 0x40020000, 0xA8000000), ("B", 0x40020400, 0x00000280),
                                  ("D", 0x40020C00, 0)):
            registers.update({base: (f"GPIO{port}_MODER", moder), base + 0x20: (f"GPIO{port}_AFRL", 0),
                              base + 0x24: (f"GPIO{port}_AFRH", 0)})
        registers.update(scb_registers(0x00000200))
        super().__init__(registers)
        self.problems: list[str] = []

    def on_read(self, name):
        return self.ccsidr() if name == CCSIDR else self.values[name]

    def write(self, address, value):
        name = self.name_of(address)
        gpio_clock = {"A": 0, "B": 1, "D": 3}
        if name.startswith("PWR_") and not self.values["RCC_APB1ENR"] & (1 << 28):
            self.trace.append(Access("w", name, value))
            self.problems.append(f"{name} written while PWREN is off (ignored)")
            return
        if name.startswith("GPIO") and not self.values["RCC_AHB1ENR"] & (1 << gpio_clock[name[4]]):
            self.trace.append(Access("w", name, value))
            self.problems.append(f"{name} written while its clock is off (ignored)")
            return
        super().write(address, value)

    def on_write(self, name, value):
        v = self.values
        if name == "RCC_CR":
            if value & (1 << 24):
                v[name] |= 1 << 25  # PLLRDY
            if value & (1 << 16):
                v[name] |= 1 << 17  # HSERDY
        elif name == "RCC_PLLCFGR" and v["RCC_CR"] & (1 << 24):
            self.problems.append("RCC_PLLCFGR written while the PLL is on (RM0385 5.3.2 forbids)")
        elif name == "RCC_CFGR":
            sw = value & 3
            if sw == 2 and not v["RCC_CR"] & (1 << 25):
                self.problems.append("SYSCLK switched to a PLL that is not ready")
            v[name] = (v[name] & ~(3 << 2)) | (sw << 2)  # SWS follows SW
        elif name == "PWR_CR1":
            if value & (1 << 16):
                v["PWR_CSR1"] |= 1 << 16  # ODRDY
            if value & (1 << 17):
                if not v["PWR_CSR1"] & (1 << 16):
                    self.problems.append("ODSWEN set before ODRDY (RM0385 4.1.4)")
                v["PWR_CSR1"] |= 1 << 17  # ODSWRDY


def stm32f7_sysclk(model: Stm32F7) -> dict[str, int]:
    pllcfgr = model.values["RCC_PLLCFGR"]
    m, n = pllcfgr & 0x3F, (pllcfgr >> 6) & 0x1FF
    p = 2 * (((pllcfgr >> 16) & 3) + 1)
    q = (pllcfgr >> 24) & 0xF
    assert not pllcfgr & (1 << 22), "the PLL runs from the HSE, which differs between the boards"
    source = 16 * MHZ  # HSI
    vco_in, vco = source // m, source // m * n
    sysclk = {0: 16 * MHZ, 2: vco // p}[model.field("RCC_CFGR", 2, 2)]
    hclk = sysclk // stm32_prescaler(model.field("RCC_CFGR", 4, 4), 4)

    def apb(bits):
        return hclk // stm32_prescaler(bits, 3)
    return {"m": m, "n": n, "p": p, "q": q, "vco_in": vco_in, "vco": vco, "sysclk": sysclk,
            "hclk": hclk, "pclk1": apb(model.field("RCC_CFGR", 10, 3)),
            "pclk2": apb(model.field("RCC_CFGR", 13, 3)), "pll48": vco // q}


@pytest.mark.parametrize("board_name", ["stm32f746", "nucleo-f746zg"])
def test_stm32f746_runs_at_216_mhz_as_rm0385_asks(board_name, tmp_path):
    board = load_board(board_name)
    check_stm32f746_bringup(board, run_init(board, tmp_path, Stm32F7()))


def check_stm32f746_bringup(board, model: Stm32F7) -> None:
    board_name = board.name
    assert model.problems == []
    clocks = stm32f7_sysclk(model)
    # RM0385 5.3.2: VCO input 1-2 MHz (2 recommended), VCO 100-432 MHz, PLLN 50-432, PLLQ 2-15.
    assert clocks["vco_in"] == 2 * MHZ and 100 * MHZ <= clocks["vco"] <= 432 * MHZ
    assert 50 <= clocks["n"] <= 432 and 2 <= clocks["q"] <= 15
    assert clocks["pll48"] == 48 * MHZ
    assert clocks["sysclk"] == clocks["hclk"] == 216 * MHZ == board.cpu["clock_hz"]
    assert board.timer["frequency_hz"] == clocks["hclk"]  # DWT counts core cycles
    # Datasheet maximums: APB1 54 MHz, APB2 108 MHz.
    assert clocks["pclk1"] == 54 * MHZ and clocks["pclk2"] == 108 * MHZ
    usart_bus = {0x40011000: "pclk2", 0x40004800: "pclk1"}[board.transport["base"]]
    assert board.transport["options"]["pclk_hz"] == clocks[usart_bus]
    # RM0385 table 5: 7 wait states from 210 MHz at 2.7-3.6 V; prefetch and ART on.
    assert model.field("FLASH_ACR", 0, 4) == 7 and model.values["FLASH_ACR"] & (3 << 8) == 3 << 8
    # Over-drive: on (ODEN, ODSWEN) and scale 1, reached by waiting on both ready flags.
    assert model.field("PWR_CR1", 14, 2) == 3 and model.field("PWR_CR1", 16, 2) == 3
    oden = model.first("PWR_CR1", predicate=lambda v: v & (1 << 16))
    odswen = model.first("PWR_CR1", predicate=lambda v: v & (1 << 17))
    assert oden < model.first("PWR_CSR1", "r", lambda v: v & (1 << 16)) < odswen
    assert odswen < model.first("PWR_CSR1", "r", lambda v: v & (1 << 17))
    # Before the switch to the PLL: over-drive ready, wait states in effect (read back),
    # prescalers set, PLL locked; after it, SWS waited on.
    switch = model.first("RCC_CFGR", predicate=lambda v: v & 3 == 2)
    assert model.first("PWR_CSR1", "r", lambda v: v & (1 << 17)) < switch
    assert model.first("FLASH_ACR", "r", lambda v: v & 0xF == 7) < switch
    assert model.first("RCC_CFGR", predicate=lambda v: (v >> 10) & 0x3F == 0b100101) < switch
    assert model.first("RCC_CR", "r", lambda v: v & (1 << 25)) < switch
    assert model.first("RCC_CFGR", "r", lambda v: (v >> 2) & 3 == 2) > switch
    check_m7_caches(model, sets=Stm32F7.dcache_sets)
    # The console pins: AF7 on the USART's TX/RX pins.
    if board_name == "stm32f746":
        assert model.field("GPIOA_MODER", 18, 2) == 2 and model.field("GPIOA_AFRH", 4, 4) == 7
        assert model.field("GPIOB_MODER", 14, 2) == 2 and model.field("GPIOB_AFRL", 28, 4) == 7
        assert model.values["RCC_APB2ENR"] & (1 << 4)
    else:
        assert model.field("GPIOD_MODER", 16, 4) == 0b1010 and model.field("GPIOD_AFRH", 0, 8) == 0x77
        assert model.values["RCC_APB1ENR"] & (1 << 18)


def test_nucleo_f746zg_inherits_the_discovery_clock_code_and_brings_its_own_console_pins():
    """The clock and cache code is written once (stm32f746's `init:`); each board's generated
    mb_board_init runs it once, followed by its own console's `transport.init:` only."""
    discovery, nucleo = load_board("stm32f746"), load_board("nucleo-f746zg")
    assert nucleo.init == discovery.init and "PLLCFGR" in discovery.init
    assert "USART3" in nucleo.transport_init and "USART1" in discovery.transport_init
    code = board_files.board_init_c(nucleo)
    assert code.count("0x40023804u") == 1                      # RCC_PLLCFGR written once
    assert "GPIODEN" in code and "GPIOAEN" not in code         # not the parent's console pins
    assert code.index("0x40023804u") < code.index("GPIODEN")   # clocks before the console


def test_the_register_model_catches_a_wrong_address_and_a_missing_wait(tmp_path):
    """The check can fail: a PLLCFGR offset off by 4 and an over-drive switch that does not wait
    for ODRDY are both reported."""
    board = load_board("stm32f746")
    wrong_offset = board.init.replace("0x40023804u", "0x40023808u")
    assert wrong_offset != board.init
    board.data["init"] = wrong_offset
    model = run_init(board, tmp_path / "offset", Stm32F7())
    with pytest.raises(AssertionError, match="1000000 == "):  # VCO input 1 MHz: PLLM at reset
        check_stm32f746_bringup(board, model)
    board = load_board("stm32f746")
    no_wait = re.sub(r"while \(\(\*pwr_csr1 & \(1u << 16\)\) == 0u\) \{ \}[^\n]*\n", "", board.init)
    assert no_wait != board.init
    board.data["init"] = no_wait.replace("*pwr_cr1 |= 1u << 16;", "")  # ODEN never set either
    model = run_init(board, tmp_path / "nowait", Stm32F7())
    assert "ODSWEN set before ODRDY (RM0385 4.1.4)" in model.problems


# --- STM32H743 (RM0433) -------------------------------------------------------------------------

class Stm32H7(CortexM7Caches, RegisterModel):
    dcache_sets = 128  # 16 KiB data cache

    def __init__(self):
        registers = {
            0x58024804: ("PWR_CSR1", 0x00004000), 0x5802480C: ("PWR_CR3", 0x00000006),
            0x58024818: ("PWR_D3CR", 0x00006000),  # VOS3 (0b01), VOSRDY after reset
            0x52002000: ("FLASH_ACR", 0x00000037),
            0x58024400: ("RCC_CR", 0x00000025), 0x58024410: ("RCC_CFGR", 0),
            0x58024418: ("RCC_D1CFGR", 0), 0x5802441C: ("RCC_D2CFGR", 0),
            0x58024420: ("RCC_D3CFGR", 0), 0x58024428: ("RCC_PLLCKSELR", 0x02020200),
            0x5802442C: ("RCC_PLLCFGR", 0x01FF0000), 0x58024430: ("RCC_PLL1DIVR", 0x01010280),
            0x580244DC: ("RCC_AHB2ENR", 0), 0x580244E0: ("RCC_AHB4ENR", 0),
            0x580244E8: ("RCC_APB1LENR", 0),
            0x58020C00: ("GPIOD_MODER", 0xFFFFFFFF), 0x58020C24: ("GPIOD_AFRH", 0),
        }
        registers.update(scb_registers(0x00000200))
        super().__init__(registers)
        self.problems: list[str] = []
        self.supply_locked = False

    def on_read(self, name):
        return self.ccsidr() if name == CCSIDR else self.values[name]

    def write(self, address, value):
        name = self.name_of(address)
        if name == "PWR_CR3" and self.supply_locked:
            self.problems.append("PWR_CR3 written twice (the supply configuration is write-once)")
        if name.startswith("GPIOD") and not self.values["RCC_AHB4ENR"] & (1 << 3):
            self.trace.append(Access("w", name, value))
            self.problems.append(f"{name} written while GPIOD's clock is off (ignored)")
            return
        super().write(address, value)

    def on_write(self, name, value):
        v = self.values
        if name == "PWR_CR3":
            self.supply_locked = True
            v["PWR_CSR1"] |= 1 << 13  # ACTVOSRDY once the configuration is applied
        elif name == "PWR_D3CR":
            if not self.supply_locked:
                self.problems.append("VOS changed before the supply configuration (RM0433 6.8.4)")
            v[name] |= 1 << 13  # VOSRDY
        elif name == "RCC_CR" and value & (1 << 24):
            v[name] |= 1 << 25  # PLL1RDY
        elif name in ("RCC_PLLCKSELR", "RCC_PLLCFGR", "RCC_PLL1DIVR") and v["RCC_CR"] & (1 << 24):
            self.problems.append(f"{name} written while PLL1 is on (RM0433 8.7.11-13 forbid)")
        elif name == "RCC_CFGR":
            if value & 7 == 3 and not v["RCC_CR"] & (1 << 25):
                self.problems.append("sys_ck switched to a PLL1 that is not ready")
            v[name] = (v[name] & ~(7 << 3)) | ((value & 7) << 3)  # SWS follows SW


# RM0433 table 17 at VOS1: (highest AXI clock, wait states, WRHIGHFREQ).
H7_FLASH_VOS1 = [(70, 0, 0), (140, 1, 1), (185, 2, 1), (210, 2, 2), (225, 3, 2)]


def test_nucleo_h743zi_runs_at_400_mhz_as_rm0433_asks(tmp_path):
    board = load_board("nucleo-h743zi")
    model = run_init(board, tmp_path, Stm32H7())
    assert model.problems == []
    # Power: LDO supply, configuration locked (SCUEN cleared), ACTVOSRDY waited for; VOS1.
    assert model.values["PWR_CR3"] & 0x7 == 0b010
    assert model.first("PWR_CR3") < model.first("PWR_CSR1", "r", lambda v: v & (1 << 13))
    assert model.field("PWR_D3CR", 14, 2) == 0b11
    vos_ready = model.first("PWR_D3CR", "r", lambda v: v & (1 << 13) and (v >> 14) & 3 == 3)
    # PLL1: HSI 64 MHz (HSIDIV /1) / DIVM1, input range matching, wide VCO 192-836 MHz.
    assert model.field("RCC_CR", 3, 2) == 0 and model.field("RCC_PLLCKSELR", 0, 2) == 0
    ref = 64 * MHZ // model.field("RCC_PLLCKSELR", 4, 6)
    ranges = {0: (1, 2), 1: (2, 4), 2: (4, 8), 3: (8, 16)}
    low, high = ranges[model.field("RCC_PLLCFGR", 2, 2)]
    assert low * MHZ <= ref <= high * MHZ
    assert model.field("RCC_PLLCFGR", 1, 1) == 0 and model.field("RCC_PLLCFGR", 0, 1) == 0
    assert ref >= 2 * MHZ  # the wide VCO needs at least 2 MHz in
    vco = ref * (model.field("RCC_PLL1DIVR", 0, 9) + 1)
    assert 192 * MHZ <= vco <= 836 * MHZ
    divp = model.field("RCC_PLL1DIVR", 9, 7) + 1
    assert divp == 1 or divp % 2 == 0  # DIVP1 takes only even values
    assert model.values["RCC_PLLCFGR"] & (1 << 16)  # DIVP1EN
    sys_ck = vco // divp if model.field("RCC_CFGR", 3, 3) == 3 else 64 * MHZ
    cpu = sys_ck // stm32_prescaler(model.field("RCC_D1CFGR", 8, 4), 4)
    hclk = cpu // stm32_prescaler(model.field("RCC_D1CFGR", 0, 4), 4)
    apb = {name: hclk // stm32_prescaler(model.field(reg, lsb, 3), 3)
           for name, reg, lsb in (("apb3", "RCC_D1CFGR", 4), ("apb1", "RCC_D2CFGR", 4),
                                  ("apb2", "RCC_D2CFGR", 8), ("apb4", "RCC_D3CFGR", 4))}
    assert cpu == 400 * MHZ == board.cpu["clock_hz"] == board.timer["frequency_hz"]
    assert hclk <= 200 * MHZ and all(f <= 100 * MHZ for f in apb.values())  # VOS1 maximums
    assert board.transport["options"]["pclk_hz"] == apb["apb1"]  # USART3 kernel clock = pclk1
    # Flash: the table-17 setting for this AXI clock, read back before the switch.
    _, wait_states, wrhighfreq = next(row for row in H7_FLASH_VOS1 if hclk <= row[0] * MHZ)
    assert model.field("FLASH_ACR", 0, 4) >= wait_states
    assert model.field("FLASH_ACR", 4, 2) == wrhighfreq
    switch = model.first("RCC_CFGR", predicate=lambda v: v & 7 == 3)
    assert vos_ready < switch
    assert model.first("FLASH_ACR", "r", lambda v: v & 0xF == model.field("FLASH_ACR", 0, 4)) < switch
    assert model.first("RCC_CR", "r", lambda v: v & (1 << 25)) < switch
    assert max(model.last("RCC_D1CFGR"), model.last("RCC_D2CFGR"), model.last("RCC_D3CFGR")) < switch
    assert model.first("RCC_CFGR", "r", lambda v: (v >> 3) & 7 == 3) > switch
    check_m7_caches(model, sets=Stm32H7.dcache_sets)
    assert model.field("GPIOD_MODER", 16, 4) == 0b1010 and model.field("GPIOD_AFRH", 0, 8) == 0x77
    assert model.values["RCC_APB1LENR"] & (1 << 18)


# --- RP2040 (datasheet chapter 2) -------------------------------------------------------------

RESETS_PLL_SYS, RESETS_IO_BANK0, RESETS_PADS_BANK0, RESETS_UART0 = 1 << 12, 1 << 5, 1 << 8, 1 << 22


class Rp2040(RegisterModel):
    """XOSC, CLOCKS (ref/sys/peri), RESETS with its set/clear aliases, PLL_SYS with its PWR clear
    alias, IO_BANK0 GPIO0/1. A block held in reset ignores writes; glitchless muxes report their
    source in *_SELECTED (one-hot)."""

    def __init__(self):
        registers = {
            0x40024000: ("XOSC_CTRL", 0), 0x40024004: ("XOSC_STATUS", 0),
            0x4002400C: ("XOSC_STARTUP", 0xC4),
            0x40008030: ("CLK_REF_CTRL", 0), 0x40008038: ("CLK_REF_SELECTED", 1),
            0x4000803C: ("CLK_SYS_CTRL", 0), 0x40008040: ("CLK_SYS_DIV", 1 << 8),
            0x40008044: ("CLK_SYS_SELECTED", 1), 0x40008048: ("CLK_PERI_CTRL", 0),
            0x4000C000: ("RESETS_RESET", 0x01FFFFFF), 0x4000C008: ("RESETS_RESET_DONE", 0),
            0x4000E000: ("RESETS_RESET_SET", 0), 0x4000F000: ("RESETS_RESET_CLR", 0),
            0x40028000: ("PLL_SYS_CS", 1), 0x40028004: ("PLL_SYS_PWR", 0x2D),
            0x40028008: ("PLL_SYS_FBDIV_INT", 0), 0x4002800C: ("PLL_SYS_PRIM", 0x77000),
            0x4002B004: ("PLL_SYS_PWR_CLR", 0),
            0x40014004: ("GPIO0_CTRL", 0x1F), 0x4001400C: ("GPIO1_CTRL", 0x1F),
        }
        super().__init__(registers)
        self.problems: list[str] = []

    def in_reset(self, mask: int) -> bool:
        return bool(self.values["RESETS_RESET"] & mask)

    def on_read(self, name):
        v = self.values
        if name == "RESETS_RESET_DONE":
            return ~v["RESETS_RESET"] & 0x01FFFFFF
        if name == "PLL_SYS_CS":
            return v[name] | (self.pll_locked() << 31)
        return v[name]

    def pll_locked(self) -> bool:
        v = self.values
        powered = not v["PLL_SYS_PWR"] & ((1 << 0) | (1 << 5))
        return powered and 16 <= v["PLL_SYS_FBDIV_INT"] <= 320 and not self.in_reset(RESETS_PLL_SYS)

    def pll_sys_hz(self) -> int:
        v = self.values
        refdiv = v["PLL_SYS_CS"] & 0x3F
        vco = 12 * MHZ // refdiv * v["PLL_SYS_FBDIV_INT"]
        return vco // (((v["PLL_SYS_PRIM"] >> 16) & 7) * ((v["PLL_SYS_PRIM"] >> 12) & 7))

    def write(self, address, value):
        name = self.name_of(address)
        blocked = {"PLL_SYS": RESETS_PLL_SYS, "GPIO": RESETS_IO_BANK0}
        for prefix, mask in blocked.items():
            if name.startswith(prefix) and self.in_reset(mask):
                self.trace.append(Access("w", name, value))
                self.problems.append(f"{name} written while its block is held in reset (ignored)")
                return
        if name == "CLK_SYS_CTRL":
            old = self.values[name]
            if (old & 1) and ((old >> 5) & 7) != ((value >> 5) & 7):
                self.problems.append("clk_sys AUXSRC changed while the glitchless mux selects aux")
        super().write(address, value)

    def on_write(self, name, value):
        v = self.values
        if name == "XOSC_CTRL":
            enabled = (value >> 12) & 0xFFF == 0xFAB and value & 0xFFF == 0xAA0
            v["XOSC_STATUS"] = (1 << 31) if enabled else 0
        elif name == "RESETS_RESET_SET":
            v["RESETS_RESET"] |= value
            if value & RESETS_PLL_SYS:  # a block in reset returns to its reset values
                for reg, (_, reset) in ((n, self.registers[a]) for a, (n, _) in self.registers.items()
                                        if n.startswith("PLL_SYS")):
                    v[reg] = reset
        elif name == "RESETS_RESET_CLR":
            v["RESETS_RESET"] &= ~value
        elif name == "PLL_SYS_PWR_CLR":
            v["PLL_SYS_PWR"] &= ~value
        elif name == "CLK_REF_CTRL":
            src = value & 3
            if src == 2 and not v["XOSC_STATUS"] & (1 << 31):
                self.problems.append("clk_ref switched to an XOSC that is not stable")
            v["CLK_REF_SELECTED"] = 1 << src
        elif name == "CLK_SYS_CTRL":
            src = value & 1
            if src == 1 and (value >> 5) & 7 == 0:
                if not self.pll_locked() or v["PLL_SYS_PWR"] & (1 << 3):
                    self.problems.append("clk_sys switched to PLL_SYS before it locked and its "
                                         "post dividers were powered")
            v["CLK_SYS_SELECTED"] = 1 << src


def test_rp2040_pico_runs_at_125_mhz_as_the_datasheet_asks(tmp_path):
    board = load_board("rp2040-pico")
    model = run_init(board, tmp_path, Rp2040())
    assert model.problems == []
    v = model.values
    # XOSC: 1-15 MHz range, enabled, start-up delay for 1 ms at 12 MHz ((12e6/1000 + 128) / 256).
    assert v["XOSC_CTRL"] == (0xFAB << 12) | 0xAA0 and v["XOSC_STARTUP"] & 0x3FFF == 47
    assert model.first("XOSC_STATUS", "r", lambda x: x & (1 << 31)) < model.first("CLK_REF_CTRL")
    # PLL_SYS (2.18.2): reference >= 5 MHz, FBDIV 16-320, VCO 750-1600 MHz, POSTDIV1 >= POSTDIV2.
    refdiv, fbdiv = v["PLL_SYS_CS"] & 0x3F, v["PLL_SYS_FBDIV_INT"]
    postdiv1, postdiv2 = (v["PLL_SYS_PRIM"] >> 16) & 7, (v["PLL_SYS_PRIM"] >> 12) & 7
    assert (refdiv, fbdiv, postdiv1, postdiv2) == (1, 125, 6, 2)
    assert 12 * MHZ // refdiv >= 5 * MHZ and 750 * MHZ <= 12 * MHZ // refdiv * fbdiv <= 1600 * MHZ
    assert v["PLL_SYS_PWR"] & 0x29 == 0  # PD, POSTDIVPD, VCOPD all cleared
    assert model.first("PLL_SYS_FBDIV_INT") < model.first("PLL_SYS_PWR_CLR")
    assert model.first("PLL_SYS_CS", "r", lambda x: x & (1 << 31)) < model.first("PLL_SYS_PRIM")
    # clk_sys: aux mux on pll_sys, glitchless mux on aux, divider 1, selection waited for.
    assert v["CLK_SYS_CTRL"] & 1 == 1 and (v["CLK_SYS_CTRL"] >> 5) & 7 == 0
    assert v["CLK_SYS_DIV"] == 1 << 8
    to_aux = model.first("CLK_SYS_CTRL", predicate=lambda x: x & 1)
    assert model.first("CLK_SYS_SELECTED", "r", lambda x: x & 2) > to_aux
    clk_sys = model.pll_sys_hz() * 256 // v["CLK_SYS_DIV"]
    assert clk_sys == 125 * MHZ == board.cpu["clock_hz"] == board.timer["frequency_hz"]
    # clk_peri: enabled, from clk_sys; it is the UART's clock.
    assert v["CLK_PERI_CTRL"] & (1 << 11) and (v["CLK_PERI_CTRL"] >> 5) & 7 == 0
    assert board.transport["options"]["uart_clock_hz"] == clk_sys
    assert not model.in_reset(RESETS_IO_BANK0 | RESETS_PADS_BANK0 | RESETS_UART0)
    assert v["GPIO0_CTRL"] & 0x1F == 2 and v["GPIO1_CTRL"] & 0x1F == 2


# --- nRF52840 (Product Specification 6.4) ---------------------------------------------------

class Nrf52840(RegisterModel):
    def __init__(self):
        super().__init__({0x40000000: ("TASKS_HFCLKSTART", 0), 0x40000100: ("EVENTS_HFCLKSTARTED", 0),
                          0x4000040C: ("HFCLKSTAT", 0)})

    def on_write(self, name, value):
        if name == "TASKS_HFCLKSTART" and value & 1:
            self.values["EVENTS_HFCLKSTARTED"] = 1
            self.values["HFCLKSTAT"] = (1 << 16) | 1  # running, source Xtal


def test_nrf52840dk_runs_on_the_hfxo(tmp_path):
    board = load_board("nrf52840dk")
    model = run_init(board, tmp_path, Nrf52840())
    start = model.first("TASKS_HFCLKSTART", predicate=lambda v: v == 1)
    # The event is cleared before the task (a stale event would end the wait early) and waited on.
    assert model.first("EVENTS_HFCLKSTARTED", predicate=lambda v: v == 0) < start
    assert model.first("EVENTS_HFCLKSTARTED", "r", lambda v: v == 1) > start
    assert model.values["HFCLKSTAT"] & 1  # HFCLK from the crystal
    assert board.cpu["clock_hz"] == board.timer["frequency_hz"] == 64 * MHZ


# --- the emulated STM32 -------------------------------------------------------------------------

def test_netduinoplus2_init_touches_no_clock_register(tmp_path):
    """QEMU models no RCC on netduinoplus2: an init that polled a ready flag would hang there. The
    empty register model makes any peripheral access an error."""
    board = load_board("netduinoplus2")
    model = run_init(board, tmp_path, RegisterModel({}))
    assert model.trace == []
