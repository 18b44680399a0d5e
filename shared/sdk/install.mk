# shared/sdk/install.mk - `make install`: libwarble, its headers, warble.pc
# and warblectl, under $(DESTDIR)$(PREFIX).  Included by the root Makefile.
#
# The installed libwarble.a bundles the runtime and protocol objects the
# SDK uses (rt_client, the codec, the error list) and Warble's patched nng,
# so a program links with only `pkg-config --libs warble` (which adds
# msgpack-c).

LIBDIR   ?= $(PREFIX)/lib
INCDIR   ?= $(PREFIX)/include
BINDIR   ?= $(PREFIX)/bin
SDK_DIST  = $(BUILD)/dist
SDK_BUNDLE = $(call objs,$(SDK_SRCS) $(RT_SRCS) $(PROTO_SRCS))

$(SDK_DIST)/libwarble.a: $(SDK_BUNDLE) $(NNG_LIB)
	@mkdir -p $(dir $@)
	rm -f $@ && printf 'create %s\naddlib %s\naddmod %s\nsave\nend\n' \
	    $@ $(NNG_LIB) "$(SDK_BUNDLE)" | $(AR) -M

$(SDK_DIST)/warble.pc: shared/sdk/install.mk
	@mkdir -p $(dir $@)
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCDIR)' '' \
	    'Name: warble' 'Description: C client of the Warble microblog API' \
	    'Version: 0.1.0' 'Cflags: -I$${includedir}' \
	    'Libs: -L$${libdir} -lwarble $(shell pkg-config --libs msgpack) -lpthread' >$@

install: $(SDK_DIST)/libwarble.a $(SDK_DIST)/warble.pc $(BUILD)/bin/warblectl
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR) $(DESTDIR)$(BINDIR)
	install -m 644 $(SDK_DIST)/libwarble.a $(DESTDIR)$(LIBDIR)/libwarble.a
	install -m 644 shared/sdk/warble.h proto/wb_errors.h $(DESTDIR)$(INCDIR)/
	install -m 644 $(SDK_DIST)/warble.pc $(DESTDIR)$(LIBDIR)/pkgconfig/warble.pc
	install -m 755 $(BUILD)/bin/warblectl $(DESTDIR)$(BINDIR)/warblectl
