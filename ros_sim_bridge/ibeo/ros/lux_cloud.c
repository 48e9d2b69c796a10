/* ibeo LUX / SICK LD-MRS scan points (data type 0x2202) -> published cloud points, one pass.
 *
 * The same arithmetic as ros_sim_bridge.ibeo.ros.conversions.CloudBuilder's numpy path, in one loop
 * over the points instead of ~15 numpy passes (called through ctypes by
 * lux_native.py beside this file).  No Python, no I/O, no allocation.
 *
 * Wire point (interface spec section 3 "Scan point", little-endian, 10 bytes):
 *   0 layer (bits 0-3) | echo (bits 4-7)   1 flags   2 angle, int16 ticks
 *   4 radial distance, uint16 cm           6 echo pulse width, uint16 cm   8 reserved
 * Cloud point (CLOUD_DTYPE, 24 bytes; the kernel runs on little-endian hosts only):
 *   0 x  4 y  8 z  12 horizontal_angle  16 echo_width (float32: m, m, m, rad, m)
 *   20 layer  21 echo  22 flags (low nibble)  23 zero
 *
 * Trigonometry comes from tables the caller computes once per scan layout:
 *   tick_trig[2*(t+32768)], [..+1]  cos h, sin h of every int16 tick value t
 *   tilt_trig (or NULL)             cos d, sin d of the 8-layer mirror-side elevation offset d(h)
 *   layer_trig[2*l], [..+1]         cos e, sin e of layer l's elevation (NaN beyond the table)
 * so that with e' = e + d:  cos e' = cos e cos d - sin e sin d,  sin e' = sin e cos d + cos e sin d
 *   x = r cos e' cos h,  y = r cos e' sin h,  z = r sin e'.
 * The unit factors come from the caller (ibeo/codec/units.py, the one home of the wire's
 * factors to SI): rad_per_tick for h and the horizontal angle, m_per_cm for r and the echo width.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(_WIN32)
#define SIM_BRIDGE_EXPORT __declspec(dllexport)
#else
#define SIM_BRIDGE_EXPORT __attribute__((visibility("default")))
#endif

enum { WIRE_POINT = 10, CLOUD_POINT = 24, TICK_OFFSET = 32768 };

/* One point; `tilt` is a constant in each caller, so the compiler drops the unused branch. */
static inline size_t point(const uint8_t *wire, uint8_t *out, const float *tick_trig,
                           const float *tilt_trig, const float *layer_trig, float rad_per_tick,
                           float m_per_cm, uint32_t layer_offset, int tilt)
{
    int16_t ticks;
    uint16_t distance_cm, width_cm;
    memcpy(&ticks, wire + 2, 2);                /* little-endian host: the wire order */
    memcpy(&distance_cm, wire + 4, 2);
    memcpy(&width_cm, wire + 6, 2);
    const unsigned layer = wire[0] & 0x0Fu;
    const float r = (float)distance_cm * m_per_cm;
    const float *h = tick_trig + 2 * ((int)ticks + TICK_OFFSET);
    float cos_e = layer_trig[2 * layer], sin_e = layer_trig[2 * layer + 1];
    if (tilt) {
        const float *d = tilt_trig + 2 * ((int)ticks + TICK_OFFSET);
        const float c = cos_e * d[0] - sin_e * d[1];
        sin_e = sin_e * d[0] + cos_e * d[1];
        cos_e = c;
    }
    const float rc = r * cos_e;
    const float xyz_h_w[5] = {rc * h[0], rc * h[1], r * sin_e, (float)ticks * rad_per_tick,
                              (float)width_cm * m_per_cm};
    memcpy(out, xyz_h_w, sizeof xyz_h_w);
    /* bytes 20..23: layer, echo, flags, 0 */
    const uint32_t tail = (layer + layer_offset) | (uint32_t)(wire[0] >> 4) << 8
                          | (uint32_t)(wire[1] & 0x0Fu) << 16;
    memcpy(out + 20, &tail, 4);
    return cos_e != cos_e;                      /* NaN: layer beyond the table */
}

/* The argument list of sim_bridge_lux_cloud; lux_native.py loads only a library that says 2
 * (version 1 had no m_per_cm). */
SIM_BRIDGE_EXPORT int sim_bridge_lux_cloud_abi(void) { return 2; }

/* Fills n cloud points; returns how many have NaN coordinates (layer beyond the table). */
SIM_BRIDGE_EXPORT size_t sim_bridge_lux_cloud(const uint8_t *wire, size_t n, uint8_t *out,
                                              const float *tick_trig, const float *tilt_trig,
                                              const float *layer_trig, float rad_per_tick,
                                              float m_per_cm, uint8_t layer_offset)
{
    size_t nan_points = 0;
    if (tilt_trig)
        for (size_t i = 0; i < n; ++i)
            nan_points += point(wire + WIRE_POINT * i, out + CLOUD_POINT * i, tick_trig,
                                tilt_trig, layer_trig, rad_per_tick, m_per_cm, layer_offset, 1);
    else
        for (size_t i = 0; i < n; ++i)
            nan_points += point(wire + WIRE_POINT * i, out + CLOUD_POINT * i, tick_trig,
                                NULL, layer_trig, rad_per_tick, m_per_cm, layer_offset, 0);
    return nan_points;
}
