# Warble build.  Everything is built out of tree under $(BUILD).
#
#   make            libraries, daemons, tools and tests
#   make deps       install what a fresh Debian 12 machine lacks (as root)
#   make test       every test; ends with "tests: N passed, M failed"
#   make test-unit  the unit tier (no daemons, seconds); make test-system the rest
#   make test-cluster  the multi-host suite: daemons in network namespaces (root)
#   make test-k8s   deploy/k8s offline: rendered, schema-checked, drift, every pod replayed
#   make SANITIZE=1 test   the same under ASan+UBSan (in build-san/)
#   make SANITIZE=thread test   under ThreadSanitizer (in build-tsan/, nng too)
#   make rocksdb-release  build RocksDB without assertions once, into a cache outside the tree
#   make ROCKSDB=release  link that RocksDB statically instead of Debian's (in build-rel/)
#   make test-one   every test again, each cluster one warble process (WARBLE_TEST_MODE=one)
#   make test-compose  build the image, run both compose files, check them
#   make run        install deps, build, start all five daemons locally
#   make run-one    the same services as one warble process
#   make bench      store vs raw RocksDB, the fan-out load benchmarks, hybrid at 1M fans
#                   (on the release RocksDB when the cache holds it; ROCKSDB=debian for Debian's)
#   make bench-cluster  shards on this machine: CPU per request and per fan-out cell
#   make bench-capacity bytes on disk per follow edge and per post (docs/operations.md)
#   make fuzz       libFuzzer targets (clang), FUZZ_SECONDS each
#   make soak       random kills and stops under load, WARBLE_SOAK_SECONDS (600),
#                   then 500k keep-alive HTTP requests that must all be answered
#   make soak-log   an event log's disk under posts with a retention of seconds
#                   (tests/soak/log_retention.sh, about 2 minutes)
#   make install    PREFIX=/usr/local DESTDIR= : SDK, headers, warblectl
#   make format     apply .clang-format; make format-check fails on a difference
#
# Libraries: msgpack-c, RocksDB, libsodium, jansson and Criterion are
# found with pkg-config.  nng is Debian 12's nng 1.5.2 source package
# rebuilt with the fixes in deploy/nng/ (a listener that stops accepting
# after a peer disconnects mid-handshake, upstream #1518; a close racing a
# transfer that hangs nng_close; a close racing a send that leaks the
# message) and linked statically from $(NNG_PREFIX);
# deploy/nng/build.sh builds it once.
#
# RocksDB is Debian's shared librocksdb by default (make, make run, make
# test, CI).  Debian builds it with assertions on; ROCKSDB=release links
# instead the same version's source package built for release
# (-DNDEBUG) by deploy/rocksdb/build.sh, statically, from a cache outside
# the tree (ROCKSDB_PREFIX), into build-rel/: the first such make builds
# it (make rocksdb-release alone does just that; see docs/operations.md).
# make bench and make bench-quick use it when the cache holds it.
ROCKSDB ?=
ROCKSDB_VERSION := $(shell dpkg-query -W -f='$${Version}' librocksdb-dev 2>/dev/null)
ROCKSDB_PREFIX  ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/warble/rocksdb-$(ROCKSDB_VERSION)
ROCKSDB_A        = $(ROCKSDB_PREFIX)/lib/librocksdb.a
ifneq ($(filter-out release debian,$(ROCKSDB)),)
$(error ROCKSDB=$(ROCKSDB): ROCKSDB=release, or debian (the default) for Debian's librocksdb)
endif
ifneq ($(and $(filter release,$(ROCKSDB)),$(SANITIZE)),)
$(error ROCKSDB=release is for the unsanitized build)
endif

SANITIZE ?=
# WARBLE_TEST_SLOW multiplies the time bounds tests hold daemons to (a
# sanitized daemon runs several times slower); the environment's wins.
# SANITIZE=thread builds everything, nng included (its own build folder,
# with nng's own NNG_RACE_DETECTOR locking, which it turns on only for
# clang), with ThreadSanitizer; the Debian libraries stay uninstrumented and
# tests/tsan.supp names the frames of theirs it reports (each one says
# why that is benign).  The image path runs under it too: warble-content
# decodes every upload with libvips, whose GLib thread pool hands work
# over through futexes TSan cannot see, so tests/tsan.supp ignores the
# calls libvips and its codecs make, by library name.
# Under either sanitizer the seed flow alone runs again with TLS on (the
# TLS code's own tests run in every stage); tests/run.sh's TLS_RUNS.
ifeq ($(SANITIZE),1)
BUILD   ?= build-san
SANFLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
WARBLE_TEST_SLOW ?= 4
export TLS_RUNS ?= seed_test
else ifeq ($(SANITIZE),thread)
BUILD   ?= build-tsan
SANFLAGS = -fsanitize=thread -fno-omit-frame-pointer
NNG_PREFIX ?= build-tsan/nng
NNG_CFLAGS = -fsanitize=thread -fno-omit-frame-pointer -DNNG_RACE_DETECTOR
WARBLE_TEST_SLOW ?= 8
# detect_deadlocks=0: TSan's lock-order detector aborts (a CHECK, not a
# report) once a thread holds 64 mutexes, and rel.follow_many holds every
# stripe lock of a batch at once, in one fixed order.
export TSAN_OPTIONS ?= suppressions=$(CURDIR)/tests/tsan.supp halt_on_error=1 detect_deadlocks=0
export TLS_RUNS ?= seed_test
else ifeq ($(ROCKSDB),release)
BUILD   ?= build-rel
SANFLAGS =
WARBLE_TEST_SLOW ?= 1
else
BUILD   ?= build
SANFLAGS =
WARBLE_TEST_SLOW ?= 1
endif
export WARBLE_TEST_SLOW

CC      ?= cc
PREFIX  ?= /usr/local
# With ROCKSDB=release, RocksDB's headers come from the cache (ahead of
# /usr/include) and its static library, with the compression libraries
# Debian's librocksdb links (ldd) and the C++ runtime, ends every link line
# (ROCKSDB_LIBS), after the archives that call it.
ifeq ($(ROCKSDB),release)
PKGS     = msgpack libsodium jansson openssl
ROCKSDB_CFLAGS = -I$(ROCKSDB_PREFIX)/include
ROCKSDB_LIBS   = $(ROCKSDB_A) -lsnappy -llz4 -lzstd -lz -lbz2 -lstdc++ -lpthread -ldl -lm
ROCKSDB_DEP    = $(ROCKSDB_A)
else
PKGS     = msgpack rocksdb libsodium jansson openssl
endif
OPT     ?= -O2
CFLAGS  ?= $(OPT) -g
WFLAGS   = -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers
NNG_PREFIX ?= build/nng
NNG_LIB  = $(NNG_PREFIX)/lib/libnng.a
INCS     = $(ROCKSDB_CFLAGS) -I$(NNG_PREFIX)/include -Iproto -Ishared/hb -Ishared/rt -Ishared/evlog -Ishared/sdk -Itests/support
ALL_CFLAGS  = $(WFLAGS) $(CFLAGS) $(SANFLAGS) -fPIC -MMD -MP -D_GNU_SOURCE $(INCS) \
              $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
EXT_LIBS    = $(shell pkg-config --libs $(PKGS) 2>/dev/null) $(NNG_LIB) -lpthread -lm
ALL_LDFLAGS = $(SANFLAGS) $(LDFLAGS)
# libvips decodes and writes images again in the content service only
# (services/content/content_image.c): its flags go to that folder's
# objects, its libraries to what links libsvc_content (the content
# daemon, warble, the content tests, warble-load), never to the others.
VIPS_CFLAGS = $(shell pkg-config --cflags vips 2>/dev/null)
VIPS_LIBS   = $(shell pkg-config --libs vips 2>/dev/null)

# Each library is every .c in its folder except tests (*_test.c),
# benchmarks (*_bench.c) and fuzz targets (*_fuzz.c).
lib_srcs = $(filter-out %_test.c %_bench.c %_fuzz.c,$(wildcard $(1)/*.c))
objs     = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

PROTO_SRCS = $(call lib_srcs,proto)
HB_SRCS    = $(call lib_srcs,shared/hb)
RT_SRCS    = $(call lib_srcs,shared/rt)
EVLOG_SRCS = $(call lib_srcs,shared/evlog)
SDK_SRCS   = $(call lib_srcs,shared/sdk)
# The test harness: wbt (tests/support), the multi-host wbc (tests/cluster)
# and the rendered Kubernetes manifests (tests/k8s).
TEST_SUPPORT_SRCS = $(call lib_srcs,tests/support) $(call lib_srcs,tests/cluster) \
                    $(call lib_srcs,tests/k8s)

LIB_PROTO = $(BUILD)/lib/libwbproto.a
LIB_HB    = $(BUILD)/lib/libhb.a
LIB_RT    = $(BUILD)/lib/librt.a
LIB_EVLOG = $(BUILD)/lib/libevlog.a
LIB_SDK   = $(BUILD)/lib/libwarble.a
LIB_TEST  = $(BUILD)/lib/libwbtest.a
LIBS      = $(LIB_SDK) $(LIB_EVLOG) $(LIB_RT) $(LIB_HB) $(LIB_PROTO) $(NNG_LIB)

# Services: services/NAME/main.c is the daemon's entry point; the other
# .c files of the folder and of its subfolders (the gateway's http/) form
# libsvc_NAME.a, which its tests link too.  services/warble/main.c is the
# one-process build, warble: every service's library in one binary.
SERVICES  = $(filter-out warble,$(notdir $(patsubst %/main.c,%,$(wildcard services/*/main.c))))
ONE_BIN   = $(BUILD)/bin/warble
SVC_BINS  = $(patsubst %,$(BUILD)/bin/warble-%,$(SERVICES)) $(ONE_BIN)
svc_lib   = $(BUILD)/lib/libsvc_$(1).a
svc_dirs  = services/$(1) $(patsubst %/,%,$(wildcard services/$(1)/*/))
svc_srcs  = $(filter-out %/main.c,$(foreach d,$(call svc_dirs,$(1)),$(call lib_srcs,$(d))))

# Tools: each .c in these folders is one program, $(BUILD)/bin/NAME:
# the CLI, the load generator and the runtime's test daemon.
TOOL_DIRS = shared/cli tests/load tests/ping
TOOL_SRCS = $(foreach d,$(TOOL_DIRS),$(call lib_srcs,$(d)))
TOOL_BINS = $(patsubst %.c,$(BUILD)/bin/%,$(notdir $(TOOL_SRCS)))

# Tests: every *_test.c becomes one Criterion binary in $(BUILD)/test/.
TEST_SRCS  = $(shell find proto shared services tests -name '*_test.c' 2>/dev/null)
TEST_BINS  = $(patsubst %.c,$(BUILD)/test/%,$(notdir $(TEST_SRCS)))
# Two tiers.  A system test starts real daemons (wbt_spawn, wbt_cluster,
# directly or through it.h, fault.h, ht.h, hs.h or the multi-host wbc.h,
# wbc_cluster.h and ct.h) or runs their binaries (wbt_bin_path,
# wbt_run_capture); a unit test does neither, so it needs no daemon built.
SYSTEM_TEST_SRCS = $(shell grep -lE 'wbt_spawn|wbt_run_capture|wbt_cluster|wbt_bin_path|"(it|fault|ht|ht_api|hs|wbc|wbc_cluster|ct)\.h"' $(TEST_SRCS))
UNIT_TEST_SRCS   = $(filter-out $(SYSTEM_TEST_SRCS),$(TEST_SRCS))
test_bins        = $(patsubst %.c,$(BUILD)/test/%,$(notdir $(1)))
BENCH_SRCS = $(shell find proto shared services tests -name '*_bench.c' 2>/dev/null)
BENCH_BINS = $(patsubst %.c,$(BUILD)/bench/%,$(notdir $(BENCH_SRCS)))

.PHONY: all deps test test-one run-one check test-unit test-unit-run test-system test-system-run test-cluster test-cluster-run test-k8s test-k8s-run test-compose test-run test-bins bench bench-run bench-quick bench-quick-run bench-cluster bench-cluster-run bench-capacity bench-capacity-run fuzz fuzz-run \
	soak soak-log run install clean format format-check rocksdb-release FORCE
all: $(LIBS) $(LIB_TEST) $(SVC_BINS) $(TOOL_BINS) $(TEST_BINS) $(BENCH_BINS) sdk

$(NNG_LIB): deploy/nng/build.sh $(wildcard deploy/nng/*.patch)
	NNG_CFLAGS="$(NNG_CFLAGS)" deploy/nng/build.sh $(NNG_PREFIX)

# The release RocksDB (deploy/rocksdb/build.sh): with ROCKSDB=release,
# built on first use if the cache lacks it; make rocksdb-release builds it
# alone, after tests/deps.sh.
$(ROCKSDB_PREFIX)/lib/librocksdb.a:
	deploy/rocksdb/build.sh $(ROCKSDB_PREFIX) >/dev/null

rocksdb-release:
	@tests/deps.sh
	@deploy/rocksdb/build.sh $(ROCKSDB_PREFIX)

$(BUILD)/obj/%.o: %.c | $(NNG_LIB) $(ROCKSDB_DEP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIB_PROTO): $(call objs,$(PROTO_SRCS))
$(LIB_HB):    $(call objs,$(HB_SRCS))
$(LIB_RT):    $(call objs,$(RT_SRCS))
$(LIB_EVLOG): $(call objs,$(EVLOG_SRCS))
$(LIB_SDK):   $(call objs,$(SDK_SRCS))
$(LIB_TEST):  $(call objs,$(TEST_SUPPORT_SRCS))
$(BUILD)/lib/%.a:
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

define service_rules
$(call svc_lib,$(1)): $(call objs,$(call svc_srcs,$(1)))
$(BUILD)/obj/services/$(1)/%.o: ALL_CFLAGS += $(addprefix -I,$(call svc_dirs,$(1)))
$(BUILD)/bin/warble-$(1): $(BUILD)/obj/services/$(1)/main.o $(call svc_lib,$(1)) $(LIBS)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(ALL_LDFLAGS) -o $$@ $$^ $$(EXT_LIBS) $$(ROCKSDB_LIBS)
endef
$(foreach s,$(SERVICES),$(eval $(call service_rules,$(s))))
$(BUILD)/obj/services/content/%.o: ALL_CFLAGS += $(VIPS_CFLAGS)
$(BUILD)/bin/warble-content $(ONE_BIN): EXT_LIBS += $(VIPS_LIBS)

$(BUILD)/obj/services/warble/%.o: ALL_CFLAGS += $(foreach s,$(SERVICES),$(addprefix -I,$(call svc_dirs,$(s))))
$(ONE_BIN): $(BUILD)/obj/services/warble/main.o $(foreach s,$(SERVICES),$(call svc_lib,$(s))) $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(EXT_LIBS) $(ROCKSDB_LIBS)

define tool_rules
$(BUILD)/bin/$(basename $(notdir $(1))): $(call objs,$(1)) $(LIBS)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(ALL_LDFLAGS) -o $$@ $$^ $$(EXT_LIBS) $$(ROCKSDB_LIBS)
endef
$(foreach t,$(TOOL_SRCS),$(eval $(call tool_rules,$(t))))

# A test links its own folder's service library (if any) and every shared
# library; a system test waits for the daemons and tools it starts.
define test_rules
$(BUILD)/test/$(basename $(notdir $(1))): $(call objs,$(1)) $(if $(filter services/%,$(1)),$(call svc_lib,$(word 2,$(subst /, ,$(1))))) $(LIB_TEST) $(LIBS) $(if $(filter $(1),$(SYSTEM_TEST_SRCS)),| $(SVC_BINS) $(TOOL_BINS))
	@mkdir -p $$(dir $$@)
	$$(CC) $$(ALL_LDFLAGS) -o $$@ $$(filter %.o %.a,$$^) $$(EXT_LIBS) $$(shell pkg-config --libs criterion) \
	    $$(ROCKSDB_LIBS)
endef
$(foreach t,$(TEST_SRCS),$(eval $(call test_rules,$(t))))
$(call test_bins,$(filter services/content/%,$(TEST_SRCS))): EXT_LIBS += $(VIPS_LIBS)
# tests/integration/erase_test.c reads every store of a stopped cluster
# with each service's own families (PREFIX_schema.h): it links their
# libraries, after its own objects.
ERASE_SVCS = user relation content inbox
$(BUILD)/obj/tests/integration/erase_test.o: ALL_CFLAGS += $(foreach s,$(ERASE_SVCS),-Iservices/$(s))
$(BUILD)/test/erase_test: $(foreach s,$(ERASE_SVCS),$(call svc_lib,$(s)))
$(BUILD)/test/erase_test: private EXT_LIBS += \
	$(foreach s,$(ERASE_SVCS),$(call svc_lib,$(s))) $(LIBS) $(VIPS_LIBS)
# The cluster suite reads the stores of stopped shards (tests/cluster/wbc_stores.c) with the
# services' own schemas: those objects of their libraries (no image code is linked).
CLUSTER_SVCS = relation content inbox
$(BUILD)/obj/tests/cluster/%.o: ALL_CFLAGS += $(foreach s,$(CLUSTER_SVCS),-Iservices/$(s))
$(call test_bins,$(wildcard tests/cluster/*_test.c)): $(foreach s,$(CLUSTER_SVCS),$(call svc_lib,$(s)))
$(call test_bins,$(wildcard tests/cluster/*_test.c)): private EXT_LIBS += \
	$(foreach s,$(CLUSTER_SVCS),$(call svc_lib,$(s))) $(LIBS)

define bench_rules
$(BUILD)/bench/$(basename $(notdir $(1))): $(call objs,$(1)) $(LIBS)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(ALL_LDFLAGS) -o $$@ $$^ $$(EXT_LIBS) $$(ROCKSDB_LIBS)
endef
$(foreach b,$(BENCH_SRCS),$(eval $(call bench_rules,$(b))))

deps:
	@tests/deps.sh

# The commands a new user types first install what they need (tests/deps.sh:
# as root it installs, as anyone else it prints the one command that does),
# then build and run in a fresh make, so that the flags read from
# pkg-config see the packages just installed.
test check:
	@tests/deps.sh
	@$(MAKE) --no-print-directory -j2 test-run

# The suite with every cluster of wbt_cluster_start as one warble process;
# the tests that kill, stop or pause one daemon keep the five (wbt_cluster.h).
test-one:
	@tests/deps.sh
	@WARBLE_TEST_MODE=one TLS_RUNS= $(MAKE) --no-print-directory -j2 test-run

# deploy/docker-compose.yml, then deploy/docker-compose.sharded.yml, run for
# real (podman or docker), each under its own project name and ports; ends
# with "compose: N passed, M failed".
test-compose:
	@tests/deps.sh compose
	@BUILD=$(BUILD) tests/deploy/compose_run.sh

ifeq ($(SANITIZE),thread)
# Criterion's runner cannot start under ThreadSanitizer (its fork arena
# clashes with TSan's memory layout: upstream Criterion issue #274), so the
# test binaries are the release build's and the daemons and tools they
# start are this build's (WBT_BIN_DIR): the code under test runs under TSan.
test-run: $(SVC_BINS) $(TOOL_BINS)
	@$(MAKE) --no-print-directory -j2 SANITIZE= BUILD=build test-bins
	@WBT_BIN_DIR=$(CURDIR)/$(BUILD)/bin BUILD=build tests/run.sh
else
test-run: all
	@BUILD=$(BUILD) tests/run.sh
endif

test-bins: $(TEST_BINS)

# The tiers: unit tests (no daemon; seconds once built), system tests (real daemons).
test-unit test-system:
	@tests/deps.sh
	@$(MAKE) --no-print-directory -j2 $@-run

test-unit-run: $(call test_bins,$(UNIT_TEST_SRCS))
	@BUILD=$(BUILD) TESTS="$(notdir $^)" tests/run.sh

test-system-run: $(call test_bins,$(SYSTEM_TEST_SRCS)) $(SVC_BINS) $(TOOL_BINS)
	@BUILD=$(BUILD) TESTS="$(notdir $(filter $(BUILD)/test/%,$^))" tests/run.sh

# The multi-host suite alone (tests/cluster): every daemon in a network
# namespace of its own, on one bridge; needs root (it skips otherwise).
test-cluster:
	@tests/deps.sh
	@$(MAKE) --no-print-directory -j2 test-cluster-run

# Under ThreadSanitizer the test binaries are the release build's, as in test-run.
CLUSTER_TESTS = $(notdir $(call test_bins,$(wildcard tests/cluster/*_test.c)))
ifeq ($(SANITIZE),thread)
test-cluster-run: $(SVC_BINS) $(TOOL_BINS)
	@$(MAKE) --no-print-directory -j2 SANITIZE= BUILD=build $(addprefix build/test/,$(CLUSTER_TESTS))
	@WBT_BIN_DIR=$(CURDIR)/$(BUILD)/bin BUILD=build TESTS="$(CLUSTER_TESTS)" tests/run.sh
else
test-cluster-run: $(addprefix $(BUILD)/test/,$(CLUSTER_TESTS)) $(SVC_BINS) $(TOOL_BINS)
	@BUILD=$(BUILD) TESTS="$(CLUSTER_TESTS)" tests/run.sh
endif

# The Kubernetes manifests (deploy/k8s) checked offline, no cluster: both
# overlays rendered by the pinned kustomize and validated against the API
# schemas, compared with the daemons' options and the image, and every pod
# of the sharded overlay run as its manifest says, each in a network
# namespace of its own (root; k8s_replay skips otherwise).  make test runs
# them too.
test-k8s:
	@tests/deps.sh
	@$(MAKE) --no-print-directory -j2 test-k8s-run

test-k8s-run: $(BUILD)/test/k8s_test $(BUILD)/test/k8s_replay_test $(SVC_BINS) $(TOOL_BINS)
	@BUILD=$(BUILD) TESTS="k8s_test k8s_replay_test" tests/run.sh

# make bench and make bench-quick run on the release RocksDB (build-rel/)
# when the cache holds it, and say how to get it otherwise (its build
# takes minutes: never inside a benchmark); ROCKSDB=debian keeps Debian's,
# as does a sanitized build.
BENCH_ROCKSDB = $(or $(ROCKSDB),$(if $(SANITIZE),debian),$(if $(wildcard $(ROCKSDB_A)),release,debian))
BENCH_NOTE    = @echo "bench: $(if $(filter release,$(BENCH_ROCKSDB)),on the release RocksDB in \
	$(ROCKSDB_PREFIX) (build-rel/),on Debian's librocksdb (assertions on): make \
	rocksdb-release builds a release one once (docs/operations.md))"
bench:
	@tests/deps.sh bench
	$(BENCH_NOTE)
	@$(MAKE) --no-print-directory -j2 ROCKSDB=$(BENCH_ROCKSDB) bench-run

# hybrid_bench at the size of the hybrid row: a million followers for each big
# account, the limit 100,000, 1,000 sampled followers (its default is a quick run).
HYBRID_BENCH_ARGS ?= 1000000 100000 20000 20 1000
bench-run: all
	@for b in $(BENCH_BINS); do echo "== $$b"; a=; \
	    case $$b in */hybrid_bench) a="$(HYBRID_BENCH_ARGS)";; esac; $$b $$a || exit 1; done
	@BUILD=$(BUILD) tests/bench/bench.sh full

# A smaller load run with the peers, a few minutes (tests/bench/bench.sh).
bench-quick:
	@tests/deps.sh bench
	$(BENCH_NOTE)
	@$(MAKE) --no-print-directory -j2 ROCKSDB=$(BENCH_ROCKSDB) bench-quick-run

bench-quick-run: $(SVC_BINS) $(BUILD)/bin/warble-load
	@BUILD=$(BUILD) tests/bench/bench.sh quick

# Shards on this machine: layouts 1,1,1 1,1,2 2,2,4 of separate daemons, warble-load
# against each as a running deployment, each run twice (tests/bench/cluster.sh).
bench-cluster:
	@tests/deps.sh bench
	@$(MAKE) --no-print-directory -j2 bench-cluster-run

bench-cluster-run: $(SVC_BINS) $(BUILD)/bin/warble-load $(BUILD)/bin/warble-probe
	@BUILD=$(BUILD) tests/bench/cluster.sh

# Bytes on disk per follow edge and per post, for the capacity model in
# docs/operations.md (tests/bench/capacity.sh, a few minutes).
bench-capacity:
	@tests/deps.sh bench
	@$(MAKE) --no-print-directory -j2 bench-capacity-run

bench-capacity-run: $(SVC_BINS) $(BUILD)/bin/warble-load
	@BUILD=$(BUILD) tests/bench/capacity.sh

# warble-load: its modules (tests/load/lib), the test harness, the inbox's
# and the content service's schemas, and the peers' clients (hiredis,
# libpq) when installed.  Which ones were found is written to a generated
# header, rewritten only when that changes, so installing a client
# rebuilds warble-load with it.
LOAD_REDIS = $(if $(wildcard /usr/include/hiredis/hiredis.h),1)
LOAD_PG    = $(if $(wildcard /usr/include/postgresql/libpq-fe.h),1)
LG_CONFIG  = $(BUILD)/gen/lg_config.h
$(LG_CONFIG): FORCE
	@mkdir -p $(dir $@)
	@printf '%s\n' "/* generated by the Makefile: the peers' clients found at build time */" \
	    $(if $(LOAD_REDIS),'#define LG_HAVE_REDIS 1') $(if $(LOAD_PG),'#define LG_HAVE_PG 1') >$@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
FORCE:
$(call objs,tests/load/warble-load.c $(wildcard tests/load/lib/*.c)): $(LG_CONFIG)
$(BUILD)/obj/tests/load/%.o: ALL_CFLAGS += -Itests/load/lib -Iservices/inbox -Iservices/content \
	-Iservices/relation \
	-I$(BUILD)/gen $(if $(LOAD_PG),-I/usr/include/postgresql)
$(BUILD)/bin/warble-load: $(call objs,$(wildcard tests/load/lib/*.c)) $(LIB_TEST) $(call svc_lib,inbox) \
	$(call svc_lib,content) $(call svc_lib,relation)
$(BUILD)/bin/warble-load: EXT_LIBS += $(LIBS) $(shell pkg-config --libs $(PKGS) 2>/dev/null) $(NNG_LIB) \
	$(if $(LOAD_REDIS),-lhiredis) $(if $(LOAD_PG),-lpq) $(VIPS_LIBS)

# home_bench, hybrid_bench, login_bench and suggest_bench run a whole
# cluster through the test harness, pubsub_bench its certificates
# (tests/support); fanout_bench runs the real inbox against stand-ins.
HARNESS_BENCHES = $(addprefix $(BUILD)/bench/,home_bench hybrid_bench login_bench pubsub_bench suggest_bench)
$(HARNESS_BENCHES): $(LIB_TEST) | $(SVC_BINS)
$(HARNESS_BENCHES): private EXT_LIBS += $(LIBS) $(NNG_LIB) -lpthread
# erase_bench deletes an account with a million fans on a whole cluster.
$(BUILD)/bench/erase_bench: $(LIB_TEST) | $(SVC_BINS)
$(BUILD)/bench/erase_bench: private EXT_LIBS += $(LIBS) $(NNG_LIB) -lpthread
$(BUILD)/bench/fanout_bench: | $(SVC_BINS)
$(BUILD)/obj/tests/bench/fanout_bench.o: ALL_CFLAGS += -Iservices/inbox

# The fault suite's randomized soak (tests/fault): WARBLE_SEED replays one.
WARBLE_SOAK_SECONDS ?= 600
soak: $(SVC_BINS) $(BUILD)/test/fault_test $(BUILD)/test/keepalive_test
	WARBLE_SOAK_SECONDS=$(WARBLE_SOAK_SECONDS) timeout --kill-after=10 $$(( $(WARBLE_SOAK_SECONDS) + 900 )) \
		$(BUILD)/test/fault_test --filter 'fault/soak' --verbose
	WARBLE_KEEPALIVE_REQUESTS=500000 timeout --kill-after=10 1800 $(BUILD)/test/keepalive_test --verbose

# An event log's disk levelling off under a retention of a few seconds.
soak-log: $(BUILD)/bin/warble
	BUILD=$(BUILD) tests/soak/log_retention.sh

fuzz:
	@tests/deps.sh
	@$(MAKE) --no-print-directory fuzz-run

fuzz-run: $(NNG_LIB)
	@$(MAKE) -f tests/fuzz.mk

# run installs first, then builds in a fresh make so that the flags read
# from pkg-config see the packages just installed.
run:
	@tests/deps.sh
	@$(MAKE) --no-print-directory -j2 daemons
	@BUILD=$(BUILD) deploy/warble-local

run-one:
	@tests/deps.sh
	@$(MAKE) --no-print-directory -j2 daemons
	@BUILD=$(BUILD) deploy/warble-local --one

daemons: $(SVC_BINS) $(TOOL_BINS)

# The house format (.clang-format, nng's style) over every C file git knows or would add
# but the bundled nng; format-check fails on any difference (CI runs it).
FORMAT_SRCS = $(shell git ls-files --cached --others --exclude-standard '*.c' '*.h' 2>/dev/null | grep -v '^deploy/')
format:
	@clang-format -i $(FORMAT_SRCS)
format-check:
	@clang-format --dry-run --Werror $(FORMAT_SRCS) && echo "format: $(words $(FORMAT_SRCS)) files clean"

clean:
	rm -rf build build-san build-tsan build-fuzz build-rel

include shared/sdk/install.mk

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
