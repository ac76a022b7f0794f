/* lib/common/clock.h: see clock.c. */
#ifndef GBP_COMMON_CLOCK_H
#define GBP_COMMON_CLOCK_H

/* Seconds on the monotonic clock (timeouts, retries, statistics). */
double gbp_now_s(void);

#endif /* GBP_COMMON_CLOCK_H */
