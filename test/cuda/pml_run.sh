#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# cuda.pml_*: pml/ob1x with device buffers of the driver emulation, device
# memory PROT_NONE outside the emulation's copies (OB1X_CUEMU_PROTECT=1),
# so any host access to it by ob1x or a BTL kills the job (pml.c).
# Argument: the BTLs / case
#   smcuda  2 ranks over btl/smcuda (CUDA IPC of the emulation: device RGETs
#           once set up, staged before; a receive by device RGET pins no
#           host copy; a first eager device message sets IPC up)
#   self    1 rank sending to itself
#   tcp     2 ranks over tcp: everything staged; one warning each for the
#           strided buffer and for the peer without a device-get BTL
#   devget  2 ranks over smcuda with pml_ob1x_cuda_test_device_get (every
#           RDMA BTL taken for a device-get one): device RGETs are sent,
#           smcuda's host CMA cannot read or write the protected device
#           memory, so every device get fails and its range comes by
#           FRAGs from a copy the sender makes then; a strided receiver
#           refuses the device RGET at once (the sender stages then)
#   late    CUDA loaded by the application after MPI_Init, no
#           communicator created: noticed from progress (pml_late.c)
#   now     CUDA loaded by the application after MPI_Init (another library
#           loaded before it, after MPI_Init too) and a device buffer sent
#           and received right after, with no MPI call in between: seen at
#           that call by ob1x's loader watch (pml_late.c now)
#   fatbin  as runtime, for an executable that carries CUDA device code
#           (an .nv_fatbin section) and no libcudart.so (nvcc's static
#           runtime): the driver is loaded at MPI_Init as well
#   host    host buffers only, program not linked with the emulation: the
#           driver is never loaded, nothing staged
#   nopin   1 rank to itself, staging without pinned memory: with
#           pml_ob1x_cuda_stage_cache 0, and with the driver refusing to
#           pin (cuMemHostAlloc fails) and copies made whole
#           (pml_ob1x_cuda_stage_piece 0): same results, no block pinned
#           (copies run only once their events are seen, OB1X_CUEMU_ASYNC,
#           in every mode: a FRAG read before its piece is copied, or a
#           receive completed before its copies land, gets wrong bytes)
#   poolclasses  1 rank to itself, a pool that fits only the larger of
#           two size classes in use: the idle smaller blocks are unpinned
#           to keep the larger, which are reused, not pinned per message
#   protect the check of the check: stock ob1 (no device support in
#           Debian's Open MPI) on the same program must crash
. "$OB1X_SRCDIR/test/cuda/lib.sh"
mode=${1:?mode}
path=LD_LIBRARY_PATH="$emu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
env=(-x "$path" -x OB1X_CUEMU_PROTECT=1 -x OB1X_CUEMU_LAZY=1 -x OB1X_CUEMU_ASYNC=1
    -x OB1X_CUEMU_ARENA_MB=256)
case $mode in
smcuda)
    build_prog pml emu
    job -np 2 "${env[@]}" --mca pml ob1x --mca btl self,smcuda "$tmp/pml" ||
        fail "device buffers over smcuda"
    job -np 2 "${env[@]}" --mca pml ob1x --mca btl self,smcuda "$tmp/pml" --direct-no-pin ||
        fail "device RGETs took a host copy on the receiver"
    job -np 2 "${env[@]}" --mca pml ob1x --mca btl self,smcuda "$tmp/pml" --warm ||
        fail "a first eager device message did not set CUDA IPC up"
    ;;
self)
    build_prog pml emu
    job -np 1 "${env[@]}" --mca pml ob1x --mca btl self "$tmp/pml" --staged ||
        fail "device buffers to self"
    ;;
tcp)
    build_prog pml emu
    job -np 2 "${env[@]}" --mca pml ob1x --mca btl self,tcp "$tmp/pml" --staged ||
        fail "device buffers over tcp"
    for why in "its datatype is not contiguous" "no BTL to that process can read device memory"; do
        expect_output "$why"
        [ "$(grep -c -- "$why" "$tmp/out")" -eq 1 ] || fail "the warning '$why' is not shown once"
    done
    ;;
devget)
    build_prog pml emu
    job -np 2 "${env[@]}" --mca pml ob1x --mca btl self,smcuda \
        --mca pml_ob1x_cuda_test_device_get 1 --mca btl_smcuda_single_copy_split_min 0 \
        --mca pml_ob1x_rdma_retries_limit 0 "$tmp/pml" --expect-device-rget ||
        fail "device RGETs refused or failed"
    ;;
late)
    build_prog pml_late
    job -np 2 "${env[@]}" --mca pml ob1x --mca btl self,smcuda "$tmp/pml_late" ||
        fail "CUDA loaded after MPI_Init"
    ;;
now)
    echo 'int ob1x_test_other_library;' >"$tmp/other.c"
    "$MPICC" -shared -fPIC -o "$tmp/libother.so" "$tmp/other.c" ||
        fail "cannot build the other library"
    build_prog pml_late
    job -np 2 "${env[@]}" --mca pml ob1x --mca btl self,smcuda "$tmp/pml_late" now \
        "$tmp/libother.so" || fail "device buffers right after CUDA was loaded"
    ;;
runtime)
    # a stand-in CUDA runtime (the name is what matters): the program never
    # loads the driver itself before its first device buffer
    echo 'int ob1x_test_cudart_stand_in;' >"$tmp/cudart.c"
    "$MPICC" -shared -fPIC -Wl,-soname,libcudart.so.12 -o "$tmp/libcudart.so.12" \
        "$tmp/cudart.c" || fail "cannot build the stand-in libcudart"
    build_prog pml_late - -Wl,--no-as-needed "$tmp/libcudart.so.12" -Wl,-rpath,"$tmp"
    job -np 2 "${env[@]}" --mca pml ob1x --mca btl self,smcuda "$tmp/pml_late" runtime ||
        fail "device buffer right after the CUDA runtime's first call"
    ;;
fatbin)
    # an executable with CUDA device code (nvcc's .nv_fatbin section) and
    # the runtime linked in statically: no libcudart.so to be seen
    build_prog pml_late - -DT_FATBIN
    objdump -h "$tmp/pml_late" | grep -q '\.nv_fatbin' || fail "no .nv_fatbin section was made"
    job -np 2 "${env[@]}" --mca pml ob1x --mca btl self,smcuda "$tmp/pml_late" runtime ||
        fail "device buffer right after the first CUDA call of a program with device code"
    ;;
host)
    build_prog pml_host
    job -np 2 "${env[@]}" --mca pml ob1x --mca btl self,vader "$tmp/pml_host" ||
        fail "host buffers"
    ;;
nopin)
    build_prog pml emu
    job -np 1 "${env[@]}" --mca pml ob1x --mca btl self --mca pml_ob1x_cuda_stage_cache 0 \
        "$tmp/pml" --staged --expect-no-pin || fail "staging with pml_ob1x_cuda_stage_cache 0"
    job -np 1 "${env[@]}" -x OB1X_CUEMU_FAIL=cuMemHostAlloc --mca pml ob1x --mca btl self \
        --mca pml_ob1x_cuda_stage_piece 0 "$tmp/pml" --staged --expect-no-pin --expect-whole ||
        fail "staging when the driver cannot pin, copies whole"
    ;;
poolclasses)
    build_prog pml emu
    job -np 1 "${env[@]}" --mca pml ob1x --mca btl self --mca pml_ob1x_cuda_stage_cache 524288 \
        "$tmp/pml" --staged --pool-classes || fail "staging pool with two size classes"
    ;;
protect)
    build_prog pml emu
    if job -np 1 "${env[@]}" --mca pml ob1 --mca btl self "$tmp/pml" --staged --nopvars; then
        fail "stock ob1 read device memory and the emulation did not catch it"
    fi
    grep -qiE "segmentation fault|signal 11|SIGSEGV" "$tmp/out" || fail "no fault reported"
    echo "stock ob1 faults on device memory, as it would on a GPU"
    ;;
*) fail "unknown mode $mode" ;;
esac
echo "PASS: cuda/pml $mode"
