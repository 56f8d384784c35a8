/* The standalone (AOT) executor's main in microbuild's own firmware: the self-test
 * (runtime/aot/self_test.c), whose exit status is 0 if every model's run returned 0, else 1. */
#include "microbuild/aot.h"

int main(void)
{
    return mb_aot_self_test();
}
