/*
 * wb_limits.h - the bounds of what users write: defined once here for the
 * services that enforce them (content_text.h, content_post.h,
 * user_check.h) and the gateway that tells clients (GET /api/v1/limits).
 */
#ifndef WB_LIMITS_H
#define WB_LIMITS_H

#define WB_TEXT_MAX     280  /* code points of a post's text */
#define WB_TITLE_MAX    100  /* code points of a post's title */
#define WB_CATEGORY_MAX 32   /* bytes of a post's category, a-z 0-9 _ */
#define WB_IMAGES_MAX   4    /* images of a post */
#define WB_ALT_MAX      1000 /* code points of an image's alt text */
#define WB_DISPLAY_MAX  64   /* code points of a display name */
#define WB_BIO_MAX      280  /* bytes of a bio (UTF-8) */

#endif
