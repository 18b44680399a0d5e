# tests/fuzz.mk - libFuzzer targets.  `make fuzz` (or make -f tests/fuzz.mk)
# builds every *_fuzz.c of the repository with clang into build-fuzz/ and
# runs each for FUZZ_SECONDS with a memory limit, starting from the seed
# corpus in tests/corpus/<target>/ (if any).  New inputs go to
# build-fuzz/corpus/<target>/, crashes to build-fuzz/<target>-crash-*.
#
#   make fuzz                           build and run every target
#   make fuzz FUZZ_SECONDS=600          run longer
#   make -f tests/fuzz.mk build         build only
#   make -f tests/fuzz.mk run FUZZ_TARGETS=wb_codec_fuzz
#   make -f tests/fuzz.mk corpus        regenerate committed seed corpora
#
# A target X_fuzz.c defines LLVMFuzzerTestOneInput and links the project
# libraries (every non-test .c of proto, shared/*, and for a target in
# services/NAME also that service's other .c files), compiled here with
# clang and the fuzzing sanitizers.  FUZZ_LIBS_X narrows what X links,
# so an unrelated library that does not build cannot block it;
# FUZZ_EXT_X adds system libraries to its link, and FUZZ_FLAGS_X runs it
# with flags of its own after FUZZ_FLAGS_RUN (libFuzzer takes the last).

.DEFAULT_GOAL := all
FUZZ_SECONDS ?= 60
FUZZ_FLAGS_RUN ?= -malloc_limit_mb=128 -rss_limit_mb=2048 -timeout=10
BF       ?= build-fuzz
FCC      ?= clang
PKGS      = msgpack rocksdb libsodium jansson openssl
SAN       = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
NNG_PREFIX ?= build/nng
INCS      = -I$(NNG_PREFIX)/include -Iproto -Ishared/hb -Ishared/rt -Ishared/evlog -Ishared/sdk -Itests/support \
            -Iservices/gateway -Iservices/gateway/http
FCFLAGS   = -std=gnu11 -O1 -g -Wall -Wextra -Wno-missing-field-initializers -D_GNU_SOURCE \
            $(SAN) -fsanitize=fuzzer-no-link $(INCS) $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
EXT_LIBS  = $(shell pkg-config --libs $(PKGS) 2>/dev/null) $(NNG_PREFIX)/lib/libnng.a -lpthread -lm

lib_srcs  = $(filter-out %_test.c %_bench.c %_fuzz.c,$(wildcard $(1)/*.c))
objs      = $(patsubst %.c,$(BF)/obj/%.o,$(1))

# Project libraries, linked in dependency order (users before used).
LIB_NAMES = sdk evlog rt hb proto
dir_sdk   = shared/sdk
dir_evlog = shared/evlog
dir_rt    = shared/rt
dir_hb    = shared/hb
dir_proto = proto
lib_file  = $(BF)/lib/lib$(1).a
$(foreach l,$(LIB_NAMES),$(eval $(call lib_file,$(l)): $(call objs,$(call lib_srcs,$(dir_$(l))))))

# What each target links (override per target: FUZZ_LIBS_<name> = proto).
FUZZ_LIBS_wb_codec_fuzz = proto
FUZZ_LIBS_hb_key_fuzz   = hb proto
FUZZ_LIBS_content_image_fuzz = rt proto

# The content service decodes images with libvips (its headers for the
# folder's objects, its libraries for the target).  content_image_fuzz's
# pixel limit is 1 MP, so one decode holds at most 16 MB
# (content_image.h): a 32 MB malloc limit is room for that and no more,
# so a decoder that allocated for a bomb past the limit fails the run.
VIPS_CFLAGS := $(shell pkg-config --cflags vips 2>/dev/null)
$(BF)/obj/services/content/%.o: FCFLAGS += $(VIPS_CFLAGS)
FUZZ_EXT_content_image_fuzz = $(shell pkg-config --libs vips 2>/dev/null)
FUZZ_FLAGS_content_image_fuzz = -malloc_limit_mb=32

FUZZ_SRCS = $(shell find proto shared services tests -name '*_fuzz.c' 2>/dev/null)
FUZZ_BINS = $(patsubst %.c,$(BF)/%,$(notdir $(FUZZ_SRCS)))
FUZZ_TARGETS ?= $(notdir $(FUZZ_BINS))

rparen   := )
svc_of    = $(if $(filter services/%,$(1)),$(word 2,$(subst /, ,$(1))))
svc_file  = $(BF)/lib/libsvc_$(1).a

.PHONY: all build run corpus clean
all: run

build: $(FUZZ_BINS)

$(BF)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FCC) $(FCFLAGS) -MMD -MP -c $< -o $@

$(BF)/lib/%.a:
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

define fuzz_rules
$(eval n := $(basename $(notdir $(1))))
$(eval s := $(call svc_of,$(1)))
$(eval libs := $(foreach l,$(or $(FUZZ_LIBS_$(n)),$(LIB_NAMES)),$(call lib_file,$(l))))
$(if $(s),$(call svc_file,$(s)): $(call objs,$(filter-out %/main.c,$(foreach d,services/$(s) $(patsubst %/,%,$(wildcard services/$(s)/*/)),$(call lib_srcs,$(d))))))
$(BF)/$(n): $(call objs,$(1)) $(if $(s),$(call svc_file,$(s))) $(libs)
	@mkdir -p $$(dir $$@)
	$(FCC) $(SAN) -fsanitize=fuzzer -o $$@ $$^ $(EXT_LIBS) $(FUZZ_EXT_$(n))
endef
$(foreach f,$(FUZZ_SRCS),$(eval $(call fuzz_rules,$(f))))

# Runs each target for FUZZ_SECONDS and prints its executions; fails on
# the first target that crashes, leaks, times out or runs out of memory.
run: $(addprefix $(BF)/,$(FUZZ_TARGETS))
	@set -e; for t in $(FUZZ_TARGETS); do \
		mkdir -p $(BF)/corpus/$$t; \
		seeds=; [ -d tests/corpus/$$t ] && seeds=tests/corpus/$$t; \
		echo "== $$t: $(FUZZ_SECONDS) s, seeds: $${seeds:-none}"; \
		extra=; case $$t in $(foreach n,$(FUZZ_TARGETS),$(n)$(rparen) extra='$(FUZZ_FLAGS_$(n))';;) esac; \
		if ! $(BF)/$$t -max_total_time=$(FUZZ_SECONDS) $(FUZZ_FLAGS_RUN) $$extra -print_final_stats=1 \
		    -artifact_prefix=$(BF)/$$t-crash- $(BF)/corpus/$$t $$seeds >$(BF)/$$t.log 2>&1; then \
			tail -n 40 $(BF)/$$t.log; echo "$$t: FAILED (log: $(BF)/$$t.log)"; exit 1; \
		fi; \
		runs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $(BF)/$$t.log | tail -n 1); \
		secs=$$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' $(BF)/$$t.log | tail -n 1); \
		cov=$$(grep -o 'cov: [0-9]*' $(BF)/$$t.log | tail -n 1); \
		echo "$$t: $$runs executions in $${secs:-?} s ($$((runs / ($${secs:-1} + 0 > 0 ? $${secs:-1} : 1))) exec/s), $$cov, corpus $$(ls $(BF)/corpus/$$t | wc -l) inputs"; \
	done

# Seed corpora: each generator tests/corpus/gen_X.c writes tests/corpus/X_fuzz/.
GEN_SRCS = $(wildcard tests/corpus/gen_*.c)
corpus:
	@set -e; for g in $(GEN_SRCS); do \
		n=$$(basename $$g .c); t=$${n#gen_}_fuzz; \
		mkdir -p $(BF)/gen tests/corpus/$$t; \
		$(CC) -std=gnu11 -O1 -D_GNU_SOURCE $(INCS) -o $(BF)/gen/$$n $$g $(call lib_srcs,proto) -lmsgpackc -lsodium -lpthread; \
		rm -f tests/corpus/$$t/*.mp; \
		$(BF)/gen/$$n tests/corpus/$$t; \
		echo "tests/corpus/$$t: $$(ls tests/corpus/$$t | wc -l) seeds"; \
	done

clean:
	rm -rf $(BF)

-include $(shell find $(BF)/obj -name '*.d' 2>/dev/null)
