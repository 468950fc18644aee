// A cache prefetch hint for Swift, which has none of its own: the gazetteer asks for a place's card while
// the nearest-place search is still running, so that the card is in cache when the placemark is built.
#ifndef GEOFENCE_CPREFETCH_SHIM_H
#define GEOFENCE_CPREFETCH_SHIM_H
static inline void geofence_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}
#endif
