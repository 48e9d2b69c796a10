/* Filling many sequence elements of a CDR buffer from their templates
 * (cdr_template.messages_with_elements): the element bytes copied to their places, then each
 * slot's values copied to their fields.  Offsets are computed by the caller (numpy), so these
 * loops only copy bytes: no byte order, alignment or type is decided here.  Loaded with
 * ctypes by cdr_native.py. */
#include <stdint.h>
#include <string.h>

#define ABI 2

__attribute__((visibility("default")))
int sim_bridge_cdr_fill_abi(void) { return ABI; }

/* Element e: the `size[tmpl[e]]` bytes at `pool + pool_at[tmpl[e]]` to `out + at[e]`. */
__attribute__((visibility("default")))
void sim_bridge_cdr_place(uint8_t *out, int64_t n, const int64_t *at, const int64_t *tmpl,
                          const uint8_t *pool, const int64_t *pool_at, const int64_t *size)
{
    for (int64_t e = 0; e < n; e++)
        memcpy(out + at[e], pool + pool_at[tmpl[e]], (size_t)size[tmpl[e]]);
}

/* A slot's values, a fixed number per element: element e's values start at `src + src_at[e]`;
 * its template `local[e]` takes them as `runs` copies of adjacent bytes, the r-th one
 * `rel[3 * (local[e] * runs + r) + 2]` bytes from byte `rel[... + 1]` of the values to
 * `out + at[e] + rel[... + 0]` (a run of 0 bytes pads a template with fewer runs). */
__attribute__((visibility("default")))
void sim_bridge_cdr_fields(uint8_t *out, int64_t n, const int64_t *at, const int64_t *local,
                           const int64_t *rel, int64_t runs, const uint8_t *src,
                           const int64_t *src_at)
{
    for (int64_t e = 0; e < n; e++) {
        uint8_t *dst = out + at[e];
        const int64_t *r = rel + 3 * local[e] * runs;
        const uint8_t *s = src + src_at[e];
        for (int64_t k = 0; k < runs; k++, r += 3) {
            switch (r[2]) {         /* the common sizes as fixed-size copies */
            case 8: memcpy(dst + r[0], s + r[1], 8); break;
            case 4: memcpy(dst + r[0], s + r[1], 4); break;
            default: memcpy(dst + r[0], s + r[1], (size_t)r[2]);
            }
        }
    }
}

/* A slot whose fields are adjacent and whose count varies by template: element e's
 * `count[local[e]]` fields of `width` bytes go to `out + at[e] + first[local[e]]` from
 * `src + src_at[e]`. */
__attribute__((visibility("default")))
void sim_bridge_cdr_blocks(uint8_t *out, int64_t n, const int64_t *at, const int64_t *local,
                           const int64_t *first, const int64_t *count, int64_t width,
                           const uint8_t *src, const int64_t *src_at)
{
    for (int64_t e = 0; e < n; e++)
        memcpy(out + at[e] + first[local[e]], src + src_at[e],
               (size_t)(count[local[e]] * width));
}
