/* wb_services.c - the endpoint and event tables of wb_services.h. */
#include <string.h>

#include "wb_services.h"

const wb_endpoint_info wb_endpoints[WB_EP_COUNT] = {
#define WB_EP_ROW(e, flag, env, url) [WB_EP_##e] = { flag, env, url },
	WB_ENDPOINTS(WB_EP_ROW)
#undef WB_EP_ROW
};

const wb_service_info wb_services[WB_SVC_COUNT] = {
#define WB_SVC_ROW(e, name, ep, list) [WB_SVC_##e] = { name, WB_EP_##ep, WB_EP_##list },
	WB_SERVICES(WB_SVC_ROW)
#undef WB_SVC_ROW
};

static const char *const wb_event_names[WB_EV_COUNT] = { [WB_EV_NONE] = "?",
#define WB_EV_ROW(e, name, log) [WB_EV_##e] = name,
	WB_EVENTS(WB_EV_ROW)
#undef WB_EV_ROW
};

const char *
wb_event_name(wb_event ev)
{
	return (unsigned)ev < WB_EV_COUNT ? wb_event_names[ev] : "?";
}

wb_event
wb_event_lookup(const char *name, size_t len)
{
	for (int ev = WB_EV_NONE + 1; name != NULL && ev < WB_EV_COUNT; ev++) {
		if (strlen(wb_event_names[ev]) == len &&
		    memcmp(wb_event_names[ev], name, len) == 0) {
			return (wb_event)ev;
		}
	}
	return WB_EV_NONE;
}
