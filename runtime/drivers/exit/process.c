/* Exit on the host: end the process. The console (posix_stdio) is unbuffered, so nothing is
 * waiting to be flushed; exit() still flushes any stdio a user's code may have used. */
#include <stdlib.h>

#include "mb_board_config.h"
#include "microbuild/platform.h"

void mb_exit(int status)
{
    exit(status);
}
