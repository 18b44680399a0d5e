/*
 * content_int.h - the content service's state, shared by its handler files.
 */
#ifndef CONTENT_INT_H
#define CONTENT_INT_H

#include <pthread.h>

#include "content.h"
#include "wb_id.h"

struct content {
	hb_table       *t;
	evlog          *log;
	wb_idgen       *ids;
	pthread_mutex_t write_mu; /* publish and delete: id order = seq order */
};

/* content_author reads the author of post id (WB_ENOPOST if none). */
int content_author(content *c, uint64_t id, uint64_t *author);

#endif
