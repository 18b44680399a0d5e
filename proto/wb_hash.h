/* wb_hash.h - a 64-bit mixer for hash table slots. */
#ifndef WB_HASH_H
#define WB_HASH_H

#include <stdint.h>

/* wb_mix64 spreads a 64-bit key over every bit (splitmix64's finalizer), for slot indexes. */
static inline uint64_t
wb_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

#endif
