/*
 * wbt_img.h - images carrying every kind of metadata a camera or an
 * editor leaves in them, for the tests that check none of it is stored:
 * each function takes a real image of its type (a fixture of
 * tests/data/media, wbt_png) and inserts chunks, segments or blocks by
 * hand, each holding WBT_IMG_SECRET:
 *
 *   PNG   tEXt, zTXt (a zlib stream of stored blocks), iTXt (XMP),
 *         eXIf (EXIF with a GPS block), after IHDR
 *   JPEG  APP1 EXIF (orientation and a GPS block), APP1 XMP, APP13
 *         IPTC, COM, right after the JFIF APP0
 *   GIF   a comment extension and an XMP application extension, after
 *         the global colour table
 *   WebP  the image chunk wrapped in VP8X with EXIF and XMP chunks
 *
 * Every result is malloc'd (NULL if out of memory or the input is not of
 * its type) and its length goes to *len.
 */
#ifndef WBT_IMG_H
#define WBT_IMG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WBT_IMG_SECRET "GPS-LOCATION-SECRET"

/* wbt_img_exif returns a TIFF (EXIF) block, without the "Exif\0\0" prefix: orientation o (1..8, 0:
 * no tag) and a GPS block naming WBT_IMG_SECRET. */
unsigned char *wbt_img_exif(int o, size_t *len);

/* wbt_img_png_meta returns png with tEXt, zTXt, iTXt (XMP) and eXIf chunks after its IHDR. */
unsigned char *wbt_img_png_meta(const void *png, size_t n, size_t *len);

/* wbt_img_jpeg_meta returns jpeg with EXIF (orientation o, 0 for none), XMP, IPTC and a comment
 * right after its JFIF APP0 (so its EXIF is the one a reader keeps: the first). */
unsigned char *wbt_img_jpeg_meta(const void *jpeg, size_t n, int o, size_t *len);

/* wbt_img_gif_meta returns gif with a comment and an XMP application extension. */
unsigned char *wbt_img_gif_meta(const void *gif, size_t n, size_t *len);

/* wbt_img_webp_meta returns a simple (VP8 or VP8L) webp of width x height in a VP8X container with
 * EXIF and XMP chunks. */
unsigned char *wbt_img_webp_meta(
    const void *webp, size_t n, uint32_t width, uint32_t height, size_t *len);

/* wbt_img_join returns a followed by b (a polyglot, data after an image, a multi-picture JPEG). */
unsigned char *wbt_img_join(const void *a, size_t an, const void *b, size_t bn, size_t *len);

/* wbt_img_clean tells whether p[0..n) holds none of the metadata above: no WBT_IMG_SECRET, no EXIF,
 * XMP, IPTC, text chunk, metadata chunk or comment marker of its type. */
bool wbt_img_clean(const void *p, size_t n, char *what, size_t what_len);

#endif
