/*
 * content_text.h - post text rules: valid UTF-8, 1 to 280 code points,
 * and not blank (only white space) unless the post has an image.
 */
#ifndef CONTENT_TEXT_H
#define CONTENT_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "wb_limits.h"

#define TEXT_MAX_CODEPOINTS WB_TEXT_MAX

/* text_utf8_count checks that s[0..n) is well-formed UTF-8 (no overlong
 * forms, no surrogates, nothing above U+10FFFF) and returns its number of
 * code points, or -1 if it is not. */
long text_utf8_count(const char *s, size_t n);

/* text_check validates a post text: WB_OK, WB_EBADTEXT (empty or not
 * UTF-8) or WB_ETOOLONG (more than 280 code points). */
int text_check(const char *s, size_t n);

/* text_blank tells whether s[0..n), valid UTF-8, holds nothing but blank
 * code points (see content_text.c): a text that shows nothing. */
bool text_blank(const char *s, size_t n);

#endif
