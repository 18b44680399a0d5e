# shared/sdk/install.mk - `make install` and `make uninstall`: libwarble
# (shared and static), its headers, warble.pc and warblectl, under
# $(DESTDIR)$(PREFIX), laid out as a Debian library is:
#
#   include/warble/warble.h, include/warble/wb_errors.h
#   lib/libwarble.so.0.5.0   SONAME libwarble.so.0 (docs/sdk.md: the policy)
#   lib/libwarble.so.0 -> libwarble.so.0.5.0, lib/libwarble.so -> libwarble.so.0
#   lib/libwarble.a
#   lib/pkgconfig/warble.pc  `pkg-config --libs warble`, or --static
#   bin/warblectl
#
# Both libraries carry the SDK, the runtime's SP client (rt_sp, which
# speaks nng's wire protocol itself: no libnng) and the protocol objects
# it uses; the shared one exports only the warble_* API
# (shared/sdk/warble.map).  Included by the root Makefile.

LIBDIR    ?= $(PREFIX)/lib
INCDIR    ?= $(PREFIX)/include
BINDIR    ?= $(PREFIX)/bin
SDK_DIST   = $(BUILD)/dist
SDK_MAJOR  = 0
SDK_VER    = 0.5.0
SDK_SONAME = libwarble.so.$(SDK_MAJOR)
SDK_BUNDLE = $(call objs,$(SDK_SRCS) shared/rt/rt_sp.c shared/rt/rt_dial.c shared/rt/rt_dns.c $(filter-out proto/wb_session.c,$(PROTO_SRCS)))
SDK_PRIV   = $(shell pkg-config --libs msgpack 2>/dev/null) -lpthread

$(SDK_DIST)/libwarble.a: $(SDK_BUNDLE)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $(SDK_BUNDLE)

$(SDK_DIST)/libwarble.so.$(SDK_VER): $(SDK_BUNDLE) shared/sdk/warble.map
	@mkdir -p $(dir $@)
	$(CC) -shared $(ALL_LDFLAGS) -Wl,-soname,$(SDK_SONAME) -Wl,--version-script=shared/sdk/warble.map \
	    -Wl,--no-undefined -o $@ $(SDK_BUNDLE) $(SDK_PRIV)
	ln -sf libwarble.so.$(SDK_VER) $(SDK_DIST)/$(SDK_SONAME)

$(SDK_DIST)/warble.pc: shared/sdk/install.mk FORCE
	@mkdir -p $(dir $@)
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(patsubst $(PREFIX)%,$${prefix}%,$(LIBDIR))' \
	    'includedir=$(patsubst $(PREFIX)%,$${prefix}%,$(INCDIR))' '' \
	    'Name: warble' 'Description: C client of the Warble microblog API' \
	    'Version: $(SDK_VER)' 'Requires.private: msgpack' 'Cflags: -I$${includedir}' \
	    'Libs: -L$${libdir} -lwarble' 'Libs.private: -lpthread' >$@

sdk: $(SDK_DIST)/libwarble.a $(SDK_DIST)/libwarble.so.$(SDK_VER) $(SDK_DIST)/warble.pc

# warble_test builds a program against the 0.1 header and runs it on the
# shared library, which it finds as $(SDK_DIST)/libwarble.so.0.
$(BUILD)/test/warble_test: | $(SDK_DIST)/libwarble.so.$(SDK_VER)

install: sdk $(BUILD)/bin/warblectl
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR)/warble $(DESTDIR)$(BINDIR)
	install -m 644 $(SDK_DIST)/libwarble.a $(DESTDIR)$(LIBDIR)/libwarble.a
	install -m 755 $(SDK_DIST)/libwarble.so.$(SDK_VER) $(DESTDIR)$(LIBDIR)/libwarble.so.$(SDK_VER)
	ln -sf libwarble.so.$(SDK_VER) $(DESTDIR)$(LIBDIR)/$(SDK_SONAME)
	ln -sf $(SDK_SONAME) $(DESTDIR)$(LIBDIR)/libwarble.so
	install -m 644 shared/sdk/warble.h proto/wb_errors.h $(DESTDIR)$(INCDIR)/warble/
	install -m 644 $(SDK_DIST)/warble.pc $(DESTDIR)$(LIBDIR)/pkgconfig/warble.pc
	install -m 755 $(BUILD)/bin/warblectl $(DESTDIR)$(BINDIR)/warblectl

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libwarble.a $(DESTDIR)$(LIBDIR)/libwarble.so \
	    $(DESTDIR)$(LIBDIR)/$(SDK_SONAME) $(DESTDIR)$(LIBDIR)/libwarble.so.$(SDK_VER) \
	    $(DESTDIR)$(LIBDIR)/pkgconfig/warble.pc $(DESTDIR)$(BINDIR)/warblectl \
	    $(DESTDIR)$(INCDIR)/warble/warble.h $(DESTDIR)$(INCDIR)/warble/wb_errors.h
	-rmdir $(DESTDIR)$(INCDIR)/warble 2>/dev/null

.PHONY: sdk uninstall
