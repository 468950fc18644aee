// epoll for Swift, whose Glibc module leaves <sys/epoll.h> out: a `ThreadExecutor`'s thread waits for its
// sources through it, registered once, instead of handing the kernel every descriptor at every wait.
#ifndef GEOFENCE_CEPOLL_SHIM_H
#define GEOFENCE_CEPOLL_SHIM_H
#include <sys/epoll.h>
#endif
