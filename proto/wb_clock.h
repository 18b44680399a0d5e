/*
 * wb_clock.h - the two clocks: the wall clock (Unix ms, for ids and
 * timestamps that leave the process) and a monotonic one (us, for
 * deadlines and durations), and the one safe way to subtract readings.
 */
#ifndef WB_CLOCK_H
#define WB_CLOCK_H

#include <stdint.h>

/* wb_now_ms returns the wall clock in Unix ms. */
uint64_t wb_now_ms(void);

/* wb_mono_us returns a monotonic clock in microseconds (for deadlines and durations). */
uint64_t wb_mono_us(void);

/*
 * wb_elapsed returns now - then, or 0 when then is the later one: clock
 * readings taken on different threads (or a wall clock stepped back) must
 * never wrap around to a huge unsigned age.
 */
static inline uint64_t
wb_elapsed(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

#endif
