/* The sequence elements of cdr_template.messages_with_elements: where each element goes (its
 * template by the phase it lands at), then one loop over all elements copying each template's
 * bytes and every slot's values to their fields.  The templates' byte offsets are computed by
 * the caller (numpy), so these loops only follow phases and copy bytes: no byte order,
 * alignment or type is decided here.  Loaded with ctypes by cdr_native.py. */
#include <stdint.h>
#include <string.h>

#define ABI 6

__attribute__((visibility("default")))
int sim_bridge_cdr_fill_abi(void) { return ABI; }

/* Runs of elements: `runs + 5 * r` = message number (runs in message order), element count n,
 * the address of its n int64 shape numbers, the offset of its shape → template function table
 * in `fmaps`, that table's length.  Element e (the runs' elements one after another) lands at
 * payload offset `pos` of its message; its template is `table[8 * f + (pos & 7)]` (-1: not
 * made yet), `tsize` bytes long.  Writes each element's template `tid[e]` and buffer offset
 * `start[e]`, each message's payload offset in the buffer `base[j]` (its head 4 bytes before,
 * the first at 8) and payload end `ends[j]`.  `state` (9 int64, zeros to start) keeps where
 * the walk stopped.  Returns the buffer size; -1 when a template is missing (its function
 * state[7] and phase state[8]: call again once it is in `table`); -2 for a shape number
 * outside its table. */
__attribute__((visibility("default")))
int64_t sim_bridge_cdr_layout(int64_t n_msg, const int64_t *head_end, int64_t n_runs,
                              const int64_t *runs, const int64_t *fmaps, const int64_t *table,
                              const int64_t *tsize, int64_t *tid, int64_t *start,
                              int64_t *base, int64_t *ends, int64_t *state)
{
    int64_t j = state[0], r = state[1], i = state[2], e = state[3], pos = state[4];
    int64_t b = state[5], open = state[6];
    if (!b)
        b = 8;
    for (; j < n_msg; j++) {
        if (!open) {
            base[j] = b;
            pos = head_end[j];
            open = 1;
        }
        for (; r < n_runs && runs[5 * r] == j; r++, i = 0) {
            const int64_t *run = runs + 5 * r;
            const int64_t *shape = (const int64_t *)(intptr_t)run[2];
            const int64_t *fmap = fmaps + run[3];
            for (; i < run[1]; i++, e++) {
                int64_t s = shape[i];
                if (s < 0 || s >= run[4])
                    return -2;
                int64_t f = fmap[s], t = table[8 * f + (pos & 7)];
                if (t < 0) {
                    state[0] = j; state[1] = r; state[2] = i; state[3] = e; state[4] = pos;
                    state[5] = b; state[6] = open; state[7] = f; state[8] = pos & 7;
                    return -1;
                }
                tid[e] = t;
                start[e] = b + pos;
                pos += tsize[t];
            }
        }
        ends[j] = pos;
        b = (b + pos + 4 + 7) / 8 * 8;
        open = 0;
    }
    return b;
}

/* n bytes: the small sizes of numbers and points as fixed-size copies, not a call */
static inline void copy(uint8_t *dst, const uint8_t *src, int64_t n)
{
    switch (n) {
    case 1: *dst = *src; return;
    case 2: memcpy(dst, src, 2); return;
    case 4: memcpy(dst, src, 4); return;
    case 8: memcpy(dst, src, 8); return;
    case 12: memcpy(dst, src, 12); return;
    case 16: memcpy(dst, src, 16); return;
    case 24: memcpy(dst, src, 24); return;
    case 32: memcpy(dst, src, 32); return;
    case 48: memcpy(dst, src, 48); return;
    case 56: memcpy(dst, src, 56); return;
    default:
        if (n <= 64 && !(n & 7)) {
            for (; n; n -= 8, dst += 8, src += 8)
                memcpy(dst, src, 8);
        } else {
            memcpy(dst, src, (size_t)n);
        }
    }
}

/* The elements' bytes: element e of run r (`runs + 4 * r`: element count, the address of its
 * int64 value rows or 0 for rows 0..n-1, its first source, the address its message's buffer
 * offsets count from) gets template `tid[e]`'s `tsize` bytes from `pool + pool_at[t]` at
 * that address + `start[e]`, then each of the template's slots
 * `slots + 6 * k` for k in slot_at[t]..slot_at[t + 1]: source number (of the run), bytes of a
 * row of plain values (all its fields), bytes of one field, fields m, first copy, copies; a
 * copy `copies + 3 * c`: offset in the element, offset in the values, bytes.  A source
 * `sources + 7 * (first + s)`: kind (0 none, 1 rows of plain values, 2 ragged values: row r's
 * fields start at values row starts[r]), address, bytes from a row to the next, bytes of a
 * row, rows, the address of int64 starts, their count.  A slot whose source is none, or whose
 * values do not hold the element's row or its fields' shape, is left as the template has it
 * and its run's source marked in `refused` (the caller fills it another way).  Nothing is read
 * outside the values. */
__attribute__((visibility("default")))
void sim_bridge_cdr_fill(int64_t n_runs, const int64_t *runs,
                         const int64_t *tid, const int64_t *start, const uint8_t *pool,
                         const int64_t *pool_at, const int64_t *tsize, const int64_t *slot_at,
                         const int64_t *slots, const int64_t *copies, const int64_t *sources,
                         uint8_t *refused)
{
    int64_t e = 0;
    for (int64_t r = 0; r < n_runs; r++) {
        const int64_t n = runs[4 * r], first = runs[4 * r + 2];
        const int64_t *rows = (const int64_t *)(intptr_t)runs[4 * r + 1];
        const int64_t out = runs[4 * r + 3];
        for (int64_t i = 0; i < n; i++, e++) {
            const int64_t t = tid[e], row = rows ? rows[i] : i;
            uint8_t *dst = (uint8_t *)(intptr_t)(out + start[e]);
            memcpy(dst, pool + pool_at[t], (size_t)tsize[t]);
            for (int64_t k = slot_at[t]; k < slot_at[t + 1]; k++) {
                const int64_t *sl = slots + 6 * k;
                const int64_t *src = sources + 7 * (first + sl[0]);
                const uint8_t *s;
                if (src[0] == 1) {
                    if (row < 0 || row >= src[4] || src[3] != sl[1])
                        goto refuse;
                    s = (const uint8_t *)(intptr_t)src[1] + row * src[2];
                } else if (src[0] == 2) {
                    if (row < 0 || row >= src[6])
                        goto refuse;
                    int64_t at = ((const int64_t *)(intptr_t)src[5])[row];
                    if (sl[3] && (at < 0 || at > src[4] - sl[3] || src[3] != sl[2]))
                        goto refuse;
                    s = (const uint8_t *)(intptr_t)src[1] + at * src[2];
                } else {
                    goto refuse;
                }
                for (const int64_t *c = copies + 3 * sl[4], *end = c + 3 * sl[5]; c < end;
                     c += 3)
                    copy(dst + c[0], s + c[1], c[2]);
                continue;
            refuse:
                refused[first + sl[0]] = 1;
            }
        }
    }
}
