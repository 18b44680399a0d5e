/*
 * wb_id.h - time-ordered unique post ids.
 *
 *    63                    22 21      16 15             0
 *   +-----------------------+----------+----------------+
 *   | ms since 2020-01-01   |  node    |   sequence     |
 *   |       42 bits         |  6 bits  |    16 bits     |
 *   +-----------------------+----------+----------------+
 *
 * Ids sort by time; a node issues up to 65536 ids per millisecond and
 * borrows from the next millisecond when it runs out, so ids never repeat
 * and never go backwards, even if the wall clock does.
 */
#ifndef WB_ID_H
#define WB_ID_H

#include <stdint.h>

#define WB_ID_EPOCH_MS  UINT64_C(1577836800000) /* 2020-01-01T00:00:00Z */
#define WB_ID_NODE_BITS 6
#define WB_ID_SEQ_BITS  16
#define WB_ID_NODE_MAX  ((1u << WB_ID_NODE_BITS) - 1)

typedef struct wb_idgen wb_idgen;

/* wb_idgen_new creates a generator for node (0..63); NULL if out of memory or node too large. */
wb_idgen *wb_idgen_new(unsigned node);

/* wb_idgen_free frees a generator. */
void wb_idgen_free(wb_idgen *g);

/* wb_idgen_floor makes the generator never issue an id <= last (call with the newest stored id on start). */
void wb_idgen_floor(wb_idgen *g, uint64_t last);

/* wb_id_next issues the next id for now_ms (Unix ms); thread-safe. */
uint64_t wb_id_next(wb_idgen *g, uint64_t now_ms);

/* wb_id_ms returns the Unix ms an id was issued at. */
uint64_t wb_id_ms(uint64_t id);

/* wb_id_min returns the smallest id issued at Unix ms (for time-range scans). */
uint64_t wb_id_min(uint64_t ms);

#endif
