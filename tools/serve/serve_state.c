/* gpubp-serve's state and log (serve.h). */
#include "serve/serve_state.h"

#include <stdarg.h>
#include <stdio.h>

struct server S = {.sigpipe = {-1, -1}, .lock = PTHREAD_MUTEX_INITIALIZER};

void logmsg(const char *fmt, ...)
{
    char line[1200];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    int n = (int)strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
    n += snprintf(line + n, sizeof line - (size_t)n, ".%03ldZ gpubp-serve: ", ts.tv_nsec / 1000000);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", line);
}
