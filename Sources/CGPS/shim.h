// libgps for Swift. Every difference between gpsd releases that the agent meets is named here. The agent
// uses libgps to connect and to send WATCH, and reads the reports itself (GPSD/Decoding); libgps's own
// reading, flattened into one record whatever version it is built against, is what the tests hold that
// decoder to (Tests/Support/GPSDTestSupport/LibgpsOracle.swift). Built and tested with gpsd 3.22
// (Debian 12, GPSD_API_MAJOR_VERSION 11); the guards cover 3.17 (API 6) to 3.27.
#ifndef GEOFENCE_CGPS_SHIM_H
#define GEOFENCE_CGPS_SHIM_H

#include <gps.h>
#include <math.h>
#include <string.h>

// API 9 (3.20): fix.time becomes timespec_t; altHAE/altMSL replace altitude; dev.activated a timespec.
// API 10 (3.21): status moves from gps_data_t into fix.
// API 13 (3.24): STATUS_FIX and friends are renamed. Only numbers cross this shim, so nothing to do.
// 3.25: gps_stream()'s third argument changes type without an API bump: it is passed as (void *) here,
//       which converts to either.
// 3.26: the type of gps_fd changes (gps_fd_t, an int on POSIX): gfa_fd() returns it as an int.

#if GPSD_API_MAJOR_VERSION < 6
#error "gpsd older than 3.17 (API 6) is not supported"
#endif

/// One report flattened: NaN for an unknown double, -1 for an unknown count.
typedef struct {
    unsigned long long set;   // gps_mask_t bits of what this read carried
    int mode;                 // 0 unknown, 1 no fix, 2 2D, 3 3D
    int status;               // 0 unknown, 1 GPS, 2 DGPS, ...
    int has_time;
    long long time_sec;
    long time_nsec;
    double latitude, longitude, alt_hae, alt_msl;
    double epx, epy, eph, epv, eps, epd, epc;
    double speed, track, climb;
    int satellites_used;      // from SKY
    double gst_lat, gst_lon, gst_alt;   // 1-sigma metres, from GST
    int gst_has_time;
    long long gst_time_sec;
    long gst_time_nsec;
    int device_activated;     // DEVICE: 1 active, 0 gone, -1 not a DEVICE report
    int device_count;         // DEVICES: how many, -1 when not a DEVICES report
    const char *device;       // the device path that shipped this report (points into gps_data_t)
    const char *error;        // ERROR: gpsd's message (points into gps_data_t)
} gfa_report;

static inline int gfa_timespec_is_set(timespec_t t) { return t.tv_sec != 0 || t.tv_nsec != 0; }

static inline void gfa_extract(const struct gps_data_t *d, gfa_report *r) {
    memset(r, 0, sizeof(*r));
    r->set = (unsigned long long)d->set;
    r->mode = d->fix.mode;
#if GPSD_API_MAJOR_VERSION >= 10
    r->status = d->fix.status;
#else
    r->status = d->status;
#endif
#if GPSD_API_MAJOR_VERSION >= 9
    r->has_time = (d->set & TIME_SET) && gfa_timespec_is_set(d->fix.time);
    r->time_sec = (long long)d->fix.time.tv_sec;
    r->time_nsec = d->fix.time.tv_nsec;
    r->alt_hae = d->fix.altHAE;
    r->alt_msl = d->fix.altMSL;
    r->eph = d->fix.eph;
    r->gst_has_time = gfa_timespec_is_set(d->gst.utctime);
    r->gst_time_sec = (long long)d->gst.utctime.tv_sec;
    r->gst_time_nsec = d->gst.utctime.tv_nsec;
    r->device_activated = (d->set & DEVICE_SET) ? gfa_timespec_is_set(d->dev.activated) : -1;
#else
    r->has_time = (d->set & TIME_SET) && isfinite(d->fix.time) && d->fix.time > 0;
    r->time_sec = (long long)floor(d->fix.time);
    r->time_nsec = (long)((d->fix.time - floor(d->fix.time)) * 1e9);
    r->alt_hae = NAN;
    r->alt_msl = d->fix.altitude;
    r->eph = NAN;
    r->gst_has_time = isfinite(d->gst.utctime) && d->gst.utctime > 0;
    r->gst_time_sec = (long long)floor(d->gst.utctime);
    r->gst_time_nsec = (long)((d->gst.utctime - floor(d->gst.utctime)) * 1e9);
    r->device_activated = (d->set & DEVICE_SET) ? (d->dev.activated > 0) : -1;
#endif
    r->latitude = d->fix.latitude;
    r->longitude = d->fix.longitude;
    r->epx = d->fix.epx;
    r->epy = d->fix.epy;
    r->epv = d->fix.epv;
    r->eps = d->fix.eps;
    r->epd = d->fix.epd;
    r->epc = d->fix.epc;
    r->speed = d->fix.speed;
    r->track = d->fix.track;
    r->climb = d->fix.climb;
    r->satellites_used = (d->set & SATELLITE_SET) ? d->satellites_used : -1;
    r->gst_lat = d->gst.lat_err_deviation;
    r->gst_lon = d->gst.lon_err_deviation;
    r->gst_alt = d->gst.alt_err_deviation;
    r->device_count = (d->set & DEVICELIST_SET) ? d->devices.ndevices : -1;
    r->device = d->dev.path;
    r->error = d->error;
}

/// The socket libgps opened. The agent reads gpsd's reports from it itself (GPSD/Decoding).
static inline int gfa_fd(const struct gps_data_t *d) { return (int)d->gps_fd; }

/// WATCH on or off; `device` (may be NULL) restricts the watch to one device path.
static inline int gfa_stream(struct gps_data_t *d, unsigned int flags, const char *device) {
    return gps_stream(d, flags, (void *)device);
}

/// gps_send() is variadic, which Swift cannot call.
static inline int gfa_send(struct gps_data_t *d, const char *command) {
    return gps_send(d, "%s", command);
}

static inline unsigned long long gfa_mask_tpv(void) { return (unsigned long long)MODE_SET; }
static inline unsigned long long gfa_mask_gst(void) { return (unsigned long long)GST_SET; }
static inline unsigned long long gfa_mask_device(void) { return (unsigned long long)DEVICE_SET; }
static inline unsigned long long gfa_mask_devicelist(void) { return (unsigned long long)DEVICELIST_SET; }
static inline unsigned long long gfa_mask_error(void) { return (unsigned long long)ERROR_SET; }
static inline unsigned long long gfa_mask_version(void) { return (unsigned long long)VERSION_SET; }
static inline unsigned long long gfa_mask_satellite(void) { return (unsigned long long)SATELLITE_SET; }

#endif
