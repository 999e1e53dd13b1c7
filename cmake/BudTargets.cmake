# Helpers shared by every bud target.

# Sanitizers on our own code (clang), every report fatal. The Verilated model and generated
# protobuf code are left uninstrumented (they build much faster and are not ours to fix); every
# executable links the runtime.
#   BUD_SANITIZE=address (or ON; `make asan`): AddressSanitizer and UndefinedBehaviorSanitizer.
#   BUD_SANITIZE=thread (`make tsan`): ThreadSanitizer. The model runs on one thread at a time and
#   does no synchronisation of its own, so leaving it uninstrumented hides no race between ours.
set(BUD_SANITIZE OFF CACHE STRING "Sanitize bud's own code (clang): OFF, address (= ON) or thread")
option(BUD_FUZZ "Build the libFuzzer targets of tests/fuzz (clang; implies BUD_SANITIZE)" OFF)
if(BUD_FUZZ AND NOT BUD_SANITIZE)
  set(BUD_SANITIZE address)
endif()
if(BUD_SANITIZE STREQUAL "thread")
  if(BUD_FUZZ)
    message(FATAL_ERROR "BUD_FUZZ needs BUD_SANITIZE=address")
  endif()
  set(BUD_SANITIZE_FLAGS -fsanitize=thread -fno-omit-frame-pointer)
  set(BUD_SANITIZE_LINK -fsanitize=thread)
elseif(BUD_SANITIZE)
  set(BUD_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all
      -fno-omit-frame-pointer)
  set(BUD_SANITIZE_LINK -fsanitize=address,undefined)
endif()
if(BUD_FUZZ)
  # Coverage for the fuzzers' feedback in every library they exercise.
  list(APPEND BUD_SANITIZE_FLAGS -fsanitize=fuzzer-no-link)
endif()
if(BUD_SANITIZE)
  add_link_options(${BUD_SANITIZE_LINK})
endif()

# Warnings (and, with BUD_SANITIZE, sanitizers) on our own code only (never on generated or
# Verilated code).
function(bud_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wno-unused-parameter)
  if(BUD_SANITIZE)
    target_compile_options(${target} PRIVATE ${BUD_SANITIZE_FLAGS})
  endif()
endfunction()

# libFuzzer targets (BUD_FUZZ=ON, clang only; tests/fuzz/CMakeLists.txt lists them):
# bud_add_fuzzer(<name> DEPS ...) builds tests/fuzz/<name>.cpp with -fsanitize=fuzzer and
# registers `fuzz:<name>`, a short deterministic run (-runs=BUD_FUZZ_RUNS -seed=1) from the seed
# corpus committed in tests/fuzz/<name>/ (passed with -seed_inputs, so the run writes nothing into
# the repository). `make fuzz` runs each for longer.
set(BUD_FUZZ_RUNS 2000 CACHE STRING "Inputs per fuzz target in the ctest run")
function(bud_add_fuzzer name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  add_executable(${name} ${PROJECT_SOURCE_DIR}/tests/fuzz/${name}.cpp)
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  bud_warnings(${name})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/fuzz)
  file(GLOB seeds ${PROJECT_SOURCE_DIR}/tests/fuzz/${name}/*)
  list(SORT seeds)
  list(JOIN seeds "," seed_list)
  set(artifacts ${PROJECT_BINARY_DIR}/fuzz/${name}-artifacts)
  file(MAKE_DIRECTORY ${artifacts})
  add_test(NAME fuzz:${name}
    COMMAND ${name} -runs=${BUD_FUZZ_RUNS} -seed=1 -max_len=4096 -timeout=60
            -seed_inputs=${seed_list} -artifact_prefix=${artifacts}/ -print_final_stats=1)
  set_tests_properties(fuzz:${name} PROPERTIES TIMEOUT 900 LABELS fuzz)
endfunction()

# A bud library: sources, public include root = the repository, warnings, alias bud::<name>.
function(bud_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(bud_${name} STATIC ${ARG_SOURCES})
  add_library(bud::${name} ALIAS bud_${name})
  target_include_directories(bud_${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(bud_${name} PUBLIC ${ARG_DEPS})
  bud_warnings(bud_${name})
endfunction()
