"""gemmlowp-style fixed-point math (exp, logistic, tanh) on Python ints, as TFLM evaluates it.

TFLM's int8 LOGISTIC and TANH kernels rescale the input to a Q4.27 int32 and run gemmlowp's
fixed-point ``logistic``/``tanh`` (a Taylor polynomial for exp, a barrel shifter of exp(-2^k)
constants, Newton-Raphson for the division). An int8 input has only 256 values, so microbuild runs
that exact integer arithmetic here, at compile time, and the device only looks the results up in a
256-entry table. Every step below is the int32 operation TFLM performs, with C's wrap-around and
truncating division reproduced, so the table equals what TFLM computes element by element.

A fixed-point value is a plain int (its raw int32); the number of integer bits is passed alongside
where it matters, as in gemmlowp's ``FixedPoint<int32_t, IntegerBits>``.
"""

from __future__ import annotations

from microbuild.compiler.quant import (
    INT32_MAX,
    INT32_MIN,
    rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul,
)


def wrap32(x: int) -> int:
    """Two's-complement int32 wrap-around, what C's int32 addition does in practice."""
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


def add(a: int, b: int) -> int:
    return wrap32(a + b)


def sub(a: int, b: int) -> int:
    return wrap32(a - b)


def mul(a: int, b: int) -> int:
    """Fixed-point product: integer bits add up, the raw value is a rounding doubling high mul."""
    return saturating_rounding_doubling_high_mul(a, b)


def saturating_rounding_mul_by_pot(x: int, exponent: int) -> int:
    """x * 2^exponent: saturating left shift for exponent > 0, rounding right shift for < 0."""
    if exponent == 0:
        return x
    if exponent < 0:
        return rounding_divide_by_pot(x, -exponent)
    threshold = (1 << (31 - exponent)) - 1
    if x > threshold:
        return INT32_MAX
    if x < -threshold:
        return INT32_MIN
    return x << exponent


def rescale(x: int, src_integer_bits: int, dst_integer_bits: int) -> int:
    """gemmlowp's Rescale<dst>(FixedPoint<int32, src>): change the number of integer bits."""
    return saturating_rounding_mul_by_pot(x, src_integer_bits - dst_integer_bits)


def one(integer_bits: int) -> int:
    """The raw value of 1.0; with no integer bits 1.0 is not representable and saturates."""
    return INT32_MAX if integer_bits == 0 else 1 << (31 - integer_bits)


def constant_pot(integer_bits: int, exponent: int) -> int:
    """The raw value of 2^exponent."""
    return 1 << (31 - integer_bits + exponent)


def rounding_half_sum(a: int, b: int) -> int:
    """(a + b) / 2 rounded away from zero, with C's truncating division."""
    total = a + b
    num = total + (1 if total >= 0 else -1)
    return num // 2 if num >= 0 else -((-num) // 2)


def exp_on_interval_between_negative_one_quarter_and_0_excl(a: int) -> int:
    """exp(a) for a in [-1/4, 0), both Q0.31: a 4th-order Taylor expansion around -1/8."""
    constant_term = 1895147668  # exp(-1/8) in Q0.31
    constant_1_over_3 = 715827883  # 1/3 in Q0.31
    x = add(a, constant_pot(0, -3))  # x = a + 1/8
    x2 = mul(x, x)
    x3 = mul(x2, x)
    x4 = mul(x2, x2)
    x4_over_4 = saturating_rounding_mul_by_pot(x4, -2)
    x4_over_24_plus_x3_over_6_plus_x2_over_2 = saturating_rounding_mul_by_pot(
        add(mul(add(x4_over_4, x3), constant_1_over_3), x2), -1)
    return add(constant_term, mul(constant_term, add(x, x4_over_24_plus_x3_over_6_plus_x2_over_2)))


# exp(-2^k) in Q0.31 for the barrel shifter of exp_on_negative_values, k = -2 .. 4.
_EXP_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
               (2, 39332535), (3, 720401), (4, 242))


def exp_on_negative_values(a: int, integer_bits: int) -> int:
    """exp(a) for a <= 0 given with ``integer_bits`` integer bits; the result is Q0.31.

    a = (a mod 1/4 - 1/4) - remainder: the first part goes through the Taylor polynomial, and each
    set bit of the remainder (a multiple of 1/4) multiplies in the matching exp(-2^k) constant.
    """
    fractional_bits = 31 - integer_bits
    one_quarter = constant_pot(integer_bits, -2)
    mask = one_quarter - 1
    a_mod_quarter_minus_one_quarter = sub(a & mask, one_quarter)
    result = exp_on_interval_between_negative_one_quarter_and_0_excl(
        rescale(a_mod_quarter_minus_one_quarter, integer_bits, 0))
    remainder = sub(a_mod_quarter_minus_one_quarter, a)
    for exponent, multiplier in _EXP_BARREL:
        if integer_bits > exponent and remainder & (1 << (fractional_bits + exponent)):
            result = mul(result, multiplier)
    if integer_bits > 5:
        # Below -32, exp() is 0 in Q0.31; only formats that can hold -32 need the clamp.
        if a < -(1 << (36 - integer_bits)):
            result = 0
    if a == 0:
        result = one(0)
    return result


def _newton_raphson_reciprocal(half_denominator: int) -> int:
    """1 / half_denominator in Q2.29 for half_denominator in [1/2, 1) (Q0.31): three
    Newton-Raphson steps from the 48/17 - 32/17 * d starting point."""
    constant_48_over_17 = 1515870810  # Q2.29
    constant_neg_32_over_17 = -1010580540  # Q2.29
    x = add(constant_48_over_17, mul(half_denominator, constant_neg_32_over_17))
    for _ in range(3):
        half_denominator_times_x = mul(half_denominator, x)  # Q2.29
        one_minus_half_denominator_times_x = sub(one(2), half_denominator_times_x)
        x = add(x, rescale(mul(x, one_minus_half_denominator_times_x), 4, 2))
    return x


def one_over_one_plus_x_for_x_in_0_1(a: int) -> int:
    """1 / (1 + a) for a in (0, 1), Q0.31 in and out."""
    x = _newton_raphson_reciprocal(rounding_half_sum(a, one(0)))
    # x approximates 2 / (1 + a) in Q2.29; read the same raw value as Q1.30 to halve it.
    return rescale(x, 1, 0)


def one_minus_x_over_one_plus_x_for_x_in_0_1(a: int) -> int:
    """(1 - a) / (1 + a) for a in (0, 1), Q0.31 in and out."""
    x = _newton_raphson_reciprocal(rounding_half_sum(a, one(0)))
    return rescale(sub(x, one(2)), 2, 0)


def logistic(a: int, integer_bits: int) -> int:
    """1 / (1 + exp(-a)) for any a with ``integer_bits`` integer bits; Q0.31 result."""
    if a == 0:
        return 1 << 30  # one half
    abs_a = a if a > 0 else wrap32(-a)
    result_if_positive = one_over_one_plus_x_for_x_in_0_1(
        exp_on_negative_values(wrap32(-abs_a), integer_bits))
    return result_if_positive if a > 0 else sub(one(0), result_if_positive)


def tanh(a: int, integer_bits: int) -> int:
    """tanh(a) = (1 - exp(-2|a|)) / (1 + exp(-2|a|)) with the sign of a; Q0.31 result."""
    if a == 0:
        return 0
    negative = a < 0
    n = a if negative else wrap32(-a)  # -|a|
    # Doubling n is exact by reading it with one more integer bit.
    t = one_minus_x_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(n, integer_bits + 1))
    return wrap32(-t) if negative else t
