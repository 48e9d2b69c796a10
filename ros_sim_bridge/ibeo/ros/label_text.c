/* Object label texts "<id> <class name>" (the LUX and ECU object markers' TEXT_VIEW_FACING):
 * object i's text is the decimal digits of ids[i], a space and the bytes of its class name
 * (`names + name_at[cls[i]]`, `name_len[cls[i]]` bytes), written one after another to `out`
 * (room for n * (21 + the longest name) bytes), each one's length to `lengths`.  Returns the
 * bytes written.  Loaded with ctypes by lux_cdr.py. */
#include <stdint.h>
#include <string.h>

#define ABI 1

__attribute__((visibility("default")))
int sim_bridge_label_texts_abi(void) { return ABI; }

__attribute__((visibility("default")))
int64_t sim_bridge_label_texts(const uint64_t *ids, const int64_t *cls, int64_t n,
                               const uint8_t *names, const int64_t *name_at,
                               const int64_t *name_len, uint8_t *out, int64_t *lengths)
{
    uint8_t *start = out;
    for (int64_t i = 0; i < n; i++) {
        uint8_t digits[20];
        int d = 0;
        uint64_t v = ids[i];
        do {
            digits[d++] = (uint8_t)('0' + v % 10);
            v /= 10;
        } while (v);
        uint8_t *text = out;
        while (d)
            *out++ = digits[--d];
        *out++ = ' ';
        memcpy(out, names + name_at[cls[i]], (size_t)name_len[cls[i]]);
        out += name_len[cls[i]];
        lengths[i] = out - text;
    }
    return out - start;
}
