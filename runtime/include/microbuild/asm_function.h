/* A function written as top-level assembly in a C file (the kernels' hot loops that need all 14
 * allocatable registers, which inline assembly cannot have): the lines around its body, so
 * every project format builds it from the C file unchanged. Its own section, so the linker
 * drops it when nothing calls it; hidden, so it never clashes with a symbol of the user's. */
#ifndef MICROBUILD_ASM_FUNCTION_H
#define MICROBUILD_ASM_FUNCTION_H

#define MB_THUMB_FUNCTION_BEGIN(NAME)                                                           \
    ".pushsection .text." NAME ", \"ax\", %progbits\n\t"                                        \
    ".syntax unified\n\t"                                                                       \
    ".thumb\n\t"                                                                                \
    ".p2align 2\n\t"                                                                            \
    ".global " NAME "\n\t"                                                                      \
    ".hidden " NAME "\n\t"                                                                      \
    ".type  " NAME ", %function\n\t"                                                            \
    ".thumb_func\n"                                                                             \
    NAME ":\n\t"

#define MB_THUMB_FUNCTION_END(NAME)                                                             \
    ".size  " NAME ", . - " NAME "\n\t"                                                         \
    ".popsection"

#endif
