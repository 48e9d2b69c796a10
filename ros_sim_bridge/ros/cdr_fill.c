/* Filling many sequence elements of a CDR buffer from their templates
 * (cdr_template.messages_with_elements): the element bytes copied to their places, then each
 * slot's values copied to their fields.  Offsets are computed by the caller (numpy), so these
 * loops only copy bytes: no byte order, alignment or type is decided here.  Loaded with
 * ctypes by cdr_native.py. */
#include <stdint.h>
#include <string.h>

#define ABI 4

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

/* The slots of a run of elements.  Element e (template `local[e]`, its bytes at `out + at[e]`,
 * its values row `rows[e]`) takes each slot s from its descriptor `desc + 6 * s`:
 *   [0] kind: 0 a fixed number of values, 1 a count that varies by template (adjacent fields)
 *   [1] the values' address; [2] bytes a row of them
 *   [3] 0, or the address of int64 first rows (a ragged slot: row r's values start at row
 *       starts[r] of the values)
 *   kind 0: [4] the address of a (templates, [5], 3) int64 table of copies: element bytes
 *           offset, values bytes offset, bytes (0 pads a template with fewer copies)
 *   kind 1: [4] the address of each template's first byte offset, [5] of each template's
 *           byte count
 * The caller has checked that every row read lies inside its values. */
__attribute__((visibility("default")))
void sim_bridge_cdr_run(uint8_t *out, int64_t n, const int64_t *at, const int64_t *local,
                        const int64_t *rows, const int64_t *desc, int64_t slots)
{
    for (int64_t e = 0; e < n; e++) {
        uint8_t *dst = out + at[e];
        int64_t t = local[e], r = rows[e];
        for (int64_t k = 0; k < slots; k++) {
            const int64_t *d = desc + 6 * k;
            const int64_t *starts = (const int64_t *)(intptr_t)d[3];
            const uint8_t *s = (const uint8_t *)(intptr_t)d[1] + (starts ? starts[r] : r) * d[2];
            if (d[0] == 0) {
                const int64_t *c = (const int64_t *)(intptr_t)d[4] + 3 * t * d[5];
                for (int64_t j = 0; j < d[5]; j++, c += 3) {
                    switch (c[2]) {     /* the common sizes as fixed-size copies */
                    case 8: memcpy(dst + c[0], s + c[1], 8); break;
                    case 4: memcpy(dst + c[0], s + c[1], 4); break;
                    default: memcpy(dst + c[0], s + c[1], (size_t)c[2]);
                    }
                }
            } else {
                memcpy(dst + ((const int64_t *)(intptr_t)d[4])[t], s,
                       (size_t)((const int64_t *)(intptr_t)d[5])[t]);
            }
        }
    }
}
