/*
 * lg_disk.c - bytes on disk per inbox entry: after the cluster has
 * stopped, open the inbox's store (its own family settings), compact the
 * tl family, count the live cells and sum the table files.
 */
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

#include "hb.h"
#include "lg_disk.h"
#include "inbox_schema.h" /* services/inbox */

/* lg_disk_sst_bytes sums the *.sst files of a RocksDB folder. */
static uint64_t
lg_disk_sst_bytes(const char *path)
{
	DIR           *d = opendir(path);
	struct dirent *e;
	struct stat    st;
	char           p[4096];
	uint64_t       sum = 0;

	if (d == NULL) {
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		if (n > 4 && strcmp(e->d_name + n - 4, ".sst") == 0 &&
		    snprintf(p, sizeof(p), "%s/%s", path, e->d_name) < (int)sizeof(p) &&
		    stat(p, &st) == 0) {
			sum += (uint64_t)st.st_size;
		}
	}
	closedir(d);
	return sum;
}

int
lg_disk_inbox(const char *path, uint32_t cap, uint64_t ttl_ms, lg_disk *out)
{
	hb_family_opts fams[INBOX_FAM_COUNT];
	hb_table_opts  topts = { 0 };
	hb_table      *t = NULL;
	hb_scan       *s = NULL;
	hb_scan_opts   so = { 0 };
	hb_cell        c;
	int            rc;

	memset(out, 0, sizeof(*out));
	out->folder_bytes = lg_du(path);
	inbox_schema_families(fams, cap, ttl_ms);
	if ((rc = hb_open(&t, path, fams, INBOX_FAM_COUNT, &topts)) != WB_OK) {
		fprintf(stderr, "warble-load: open %s: %s %s\n", path, wb_strerror(rc),
		    hb_last_error());
		return -1;
	}
	if ((rc = hb_flush(t, INBOX_FAM_TL)) == WB_OK) {
		rc = hb_compact(t, INBOX_FAM_TL);
	}
	if (rc == WB_OK) {
		rc = hb_scan_open(&s, t, INBOX_FAM_TL, &so);
	}
	while (rc == WB_OK && (rc = hb_scan_next(s, &c)) == WB_OK) {
		out->cells++;
	}
	hb_scan_close(s);
	hb_close(t);
	if (rc != WB_EEND) {
		fprintf(stderr, "warble-load: compact/scan %s: %s\n", path, wb_strerror(rc));
		return -1;
	}
	out->sst_bytes = lg_disk_sst_bytes(path);
	out->folder_after_bytes = lg_du(path);
	return 0;
}
