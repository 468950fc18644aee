// libmosquitto 2.0 (Debian 12: 2.0.11). mqtt_protocol.h carries the MQTT v5 reason codes and property
// identifiers. The library has no variadic functions, so nothing needs wrapping in C.
#include <mosquitto.h>
#include <mqtt_protocol.h>
