/* wb_slot.c - slots and shards (see wb_slot.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wb_hash.h"
#include "wb_slot.h"

unsigned
wb_slot(uint64_t uid)
{
	return (unsigned)(wb_mix64(uid) % WB_SLOTS);
}

unsigned
wb_group_shard(unsigned group, unsigned count)
{
	/* the largest i with floor(i * 64 / count) <= group */
	return ((group + 1) * count - 1) / WB_SLOT_GROUPS;
}

unsigned
wb_slot_shard(unsigned slot, unsigned count)
{
	return wb_group_shard(wb_slot_group(slot), count);
}

unsigned
wb_uid_shard(uint64_t uid, unsigned count)
{
	return wb_slot_shard(wb_slot(uid), count);
}

void
wb_shard_slots(wb_shard s, unsigned *lo, unsigned *hi)
{
	*lo = s.index * WB_SLOT_GROUPS / s.count * WB_GROUP_SLOTS;
	*hi = (s.index + 1) * WB_SLOT_GROUPS / s.count * WB_GROUP_SLOTS;
}

bool
wb_shard_owns(wb_shard s, unsigned slot)
{
	return wb_slot_shard(slot, s.count) == s.index;
}

bool
wb_shard_parse(const char *text, wb_shard *s)
{
	const char *slash;
	unsigned    i, n;
	int         used = 0;

	if (text == NULL || text[0] < '0' || text[0] > '9' || (slash = strchr(text, '/')) == NULL ||
	    slash[1] < '0' || slash[1] > '9' || sscanf(text, "%u/%u%n", &i, &n, &used) != 2 ||
	    text[used] != '\0' || n == 0 || n > WB_SHARDS_MAX || i >= n) {
		return false;
	}
	s->index = i;
	s->count = n;
	return true;
}
