/*
 * lg_disk.c - bytes on disk, measured on a stopped cluster's stores with
 * their own family settings: per inbox entry (the tl family compacted,
 * its live cells counted, the table files summed), the images of the
 * content store (its blob files and the image families' table files), and
 * every family of the relation and content stores (per edge, per post).
 */
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

#include "hb.h"
#include "lg_disk.h"
#include "content_schema.h" /* services/content */
#include "inbox_schema.h"   /* services/inbox */
#include "rel_schema.h"     /* services/relation */

/* lg_disk_files sums the files of a RocksDB folder whose names end in ext. */
static uint64_t
lg_disk_files(const char *path, const char *ext)
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
		size_t n = strlen(e->d_name), k = strlen(ext);
		if (n > k && strcmp(e->d_name + n - k, ext) == 0 &&
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
	out->sst_bytes = lg_disk_files(path, ".sst");
	out->folder_after_bytes = lg_du(path);
	return 0;
}

/* lg_disk_images sums the blob files and the table files of the image families. */
static uint64_t
lg_disk_images(hb_table *t, const char *path)
{
	uint64_t sum = lg_disk_files(path, ".blob"), sst;

	for (int fam = CONTENT_FAM_UPLOAD; fam <= CONTENT_FAM_MEDIA_PREVIEW; fam++) {
		if (hb_family_stats(t, fam, &sst, NULL) == WB_OK) {
			sum += sst;
		}
	}
	return sum;
}

int
lg_disk_media(const char *path, uint64_t *flushed, uint64_t *compacted)
{
	hb_family_opts fams[CONTENT_FAM_COUNT];
	hb_table_opts  topts = { 0 };
	hb_table      *t = NULL;
	int            rc;

	content_schema_families(fams);
	if ((rc = hb_open(&t, path, fams, CONTENT_FAM_COUNT, &topts)) != WB_OK) {
		fprintf(stderr, "warble-load: open %s: %s %s\n", path, wb_strerror(rc),
		    hb_last_error());
		return -1;
	}
	for (int fam = CONTENT_FAM_UPLOAD; rc == WB_OK && fam <= CONTENT_FAM_MEDIA_PREVIEW; fam++) {
		rc = hb_flush(t, fam);
	}
	*flushed = lg_disk_images(t, path);
	for (int fam = CONTENT_FAM_UPLOAD; rc == WB_OK && fam <= CONTENT_FAM_MEDIA_PREVIEW; fam++) {
		rc = hb_compact(t, fam);
	}
	*compacted = lg_disk_images(t, path);
	hb_close(t);
	if (rc != WB_OK) {
		fprintf(stderr, "warble-load: flush/compact %s: %s\n", path, wb_strerror(rc));
		return -1;
	}
	return 0;
}

/* lg_disk_store_measure opens the store at path with fams, flushes and compacts every family,
 * sums each family's table files and counts the live cells of family count. */
static int
lg_disk_store_measure(
    const char *path, const hb_family_opts *fams, int nfams, int count, lg_disk_store *out)
{
	hb_table_opts topts = { 0 };
	hb_table     *t = NULL;
	hb_scan      *s = NULL;
	hb_scan_opts  so = { 0 };
	hb_cell       c;
	int           rc;

	memset(out, 0, sizeof(*out));
	if (nfams > LG_DISK_FAMS) {
		return -1;
	}
	if ((rc = hb_open(&t, path, fams, (size_t)nfams, &topts)) != WB_OK) {
		fprintf(stderr, "warble-load: open %s: %s %s\n", path, wb_strerror(rc),
		    hb_last_error());
		return -1;
	}
	for (int f = 0; rc == WB_OK && f < nfams; f++) {
		if ((rc = hb_flush(t, f)) == WB_OK) {
			rc = hb_compact(t, f);
		}
	}
	for (int f = 0; rc == WB_OK && f < nfams; f++) {
		out->name[f] = fams[f].name;
		rc = hb_family_stats(t, f, &out->bytes[f], NULL);
		out->sst_bytes += out->bytes[f];
	}
	out->nfams = nfams;
	if (rc == WB_OK) {
		rc = hb_scan_open(&s, t, count, &so);
	}
	while (rc == WB_OK && (rc = hb_scan_next(s, &c)) == WB_OK) {
		out->cells++;
		out->value_bytes += c.value_len;
	}
	hb_scan_close(s);
	hb_close(t);
	if (rc != WB_EEND) {
		fprintf(stderr, "warble-load: compact/scan %s: %s\n", path, wb_strerror(rc));
		return -1;
	}
	out->folder_bytes = lg_du(path);
	return 0;
}

int
lg_disk_relation(const char *path, lg_disk_store *out)
{
	hb_family_opts fams[REL_FAM_NFAMS];

	rel_schema(fams);
	return lg_disk_store_measure(path, fams, REL_FAM_NFAMS, REL_FAM_FOLLOW, out);
}

int
lg_disk_content(const char *path, lg_disk_store *out)
{
	hb_family_opts fams[CONTENT_FAM_COUNT];

	content_schema_families(fams);
	return lg_disk_store_measure(path, fams, CONTENT_FAM_COUNT, CONTENT_FAM_POST, out);
}
