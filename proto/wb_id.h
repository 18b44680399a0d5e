/*
 * wb_id.h - time-ordered unique post ids.
 *
 *    63                    22 21      16 15             0
 *   +-----------------------+----------+----------------+
 *   | ms since 2020-01-01   |  node    |   sequence     |
 *   |       42 bits         |  6 bits  |    16 bits     |
 *   +-----------------------+----------+----------------+
 *
 * Ids sort by time; a generator issues up to 65536 ids per millisecond
 * and borrows from the next millisecond when it runs out, so its ids never
 * repeat and never go backwards, even if the wall clock does.  A post's
 * node is its author's slot group (wb_slot.h), so its id names the shard
 * that keeps it; ids stay unique across processes because one slot group
 * is written by one content shard at a time.
 */
#ifndef WB_ID_H
#define WB_ID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WB_ID_EPOCH_MS  UINT64_C(1577836800000) /* 2020-01-01T00:00:00Z */
#define WB_ID_NODE_BITS 6
#define WB_ID_SEQ_BITS  16
#define WB_ID_NODE_MAX  ((1u << WB_ID_NODE_BITS) - 1)

typedef struct wb_idgen wb_idgen;

/* wb_idgen_new creates a generator; NULL if out of memory. */
wb_idgen *wb_idgen_new(void);

/* wb_idgen_free frees a generator. */
void wb_idgen_free(wb_idgen *g);

/* wb_idgen_floor makes the generator never issue an id <= last (call with the newest stored id on start). */
void wb_idgen_floor(wb_idgen *g, uint64_t last);

/* wb_id_next issues the next id for node (0..63, its low 6 bits) at now_ms (Unix ms); thread-safe. */
uint64_t wb_id_next(wb_idgen *g, unsigned node, uint64_t now_ms);

/* wb_id_node returns the node an id was issued for (a post's: its author's slot group, wb_slot.h). */
static inline unsigned
wb_id_node(uint64_t id)
{
	return (unsigned)(id >> WB_ID_SEQ_BITS) & WB_ID_NODE_MAX;
}

/* wb_id_ms returns the Unix ms an id was issued at. */
uint64_t wb_id_ms(uint64_t id);

/* wb_id_min returns the smallest id issued at Unix ms (for time-range scans). */
uint64_t wb_id_min(uint64_t ms);

/*
 * Media ids name their owner: "<author uid>-<id>" in decimal, both
 * nonzero without leading zeros ("7-7321123456789012"), so a reader can
 * route to the author's shard as post.get's author hints do.
 */
#define WB_MEDIA_ID_MAX 42 /* bytes of the longest media id, with its NUL */

/* wb_media_id_format writes the media id of (author, id) into buf (WB_MEDIA_ID_MAX bytes) and returns buf. */
char *wb_media_id_format(char *buf, uint64_t author, uint64_t id);

/* wb_media_id_parse reads a media id (n bytes); false if s is not one. */
bool wb_media_id_parse(const char *s, size_t n, uint64_t *author, uint64_t *id);

#endif
