// The system's zlib for Swift (Debian's zlib1g-dev).
#ifndef GEOFENCE_CZLIB_SHIM_H
#define GEOFENCE_CZLIB_SHIM_H
#include <zlib.h>
#endif
