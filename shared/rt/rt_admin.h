/*
 * rt_admin.h - the admin operations every daemon with a store serves on
 * its own (internal) port, never through the gateway: admin.backup.
 *
 *   admin.backup {dir}  ->  {service, dir, time, release, elapsed_ms, logs?}
 *
 * dir is a folder on the service's machine that must not exist yet (its
 * parent must): the store's consistent checkpoint goes there
 * (hb_checkpoint: hard links on the same file system, copies otherwise),
 * and the folder then serves as the service's store as it is, so a
 * restore is a copy into DATA/<service>.
 *
 * logs are the event-log positions the service adds through its hook
 * (rt_admin_logs): a source (content, relation) reports its log's last
 * seq read BEFORE the checkpoint, a lower bound of what the copy holds; a
 * consumer (inbox) reports its applied seqs read AFTER it, an upper bound.
 * So "the consumer's applied <= the source's last" in a manifest proves
 * that the copies are safe to restore together (warblectl admin backup).
 */
#ifndef RT_ADMIN_H
#define RT_ADMIN_H

#include <stdbool.h>

#include "hb.h"
#include "rt_server.h"

typedef struct rt_admin rt_admin;

/* A hook that adds the service's event-log positions (LOGS) to a backup's reply. */
typedef int (*rt_admin_logs_fn)(void *arg, wb_obj *rep);

/* rt_admin_open registers admin.backup for the store t of service name on srv (before it starts). */
int rt_admin_open(rt_admin **out, rt_server *srv, const char *name, hb_table *t);

/* rt_admin_logs sets the hook reporting event-log positions: run after the checkpoint if after, else before it. */
void rt_admin_logs(rt_admin *a, rt_admin_logs_fn fn, void *arg, bool after);

/* rt_admin_close frees what rt_admin_open made, once the server has closed; NULL is ignored. */
void rt_admin_close(rt_admin *a);

#endif
