# shellcheck shell=bash
# Sourced by bench/compare_pytorch.sh and bench/scaling.sh: sets torch_env, the command prefix
# (an array: "${torch_env[@]}" /usr/bin/python3 ...) that runs PyTorch "tuned" as in the
# course's reference numbers; core, the OpenBLAS core PyTorch runs on with it; and malloc_env,
# its glibc settings alone (bench/scaling.sh can give them to attend too).
#
# Its GEMM library may not use threads of its own (OPENBLAS_NUM_THREADS=1: torch's intra-op
# threads are the only ones), the OpenBLAS core is detected rather than forced, and glibc keeps
# freed memory instead of returning it to the system after every step. One exception to
# "detected": OpenBLAS 0.3.21 does not know Intel's Sapphire/Emerald Rapids and falls back to
# its SSE3 kernels (Core: Prescott, a fifth of its AVX-512 rate); on a CPU with AVX-512 where
# it detects a core without AVX-512, torch_env names its newest AVX-512 kernels
# (OPENBLAS_CORETYPE=Cooperlake) so that a ratio is against a PyTorch at full speed.
malloc_env=(MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=17179869184)  # glibc keeps
torch_env=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 "${malloc_env[@]}")

openblas_core() {  # the core OpenBLAS picks under PyTorch, with the given environment
  "$@" OPENBLAS_VERBOSE=2 /usr/bin/python3 -c 'import torch; torch.ones(2, 2) @ torch.ones(2, 2)' 2>&1 |
    sed -n 's/^Core: //p' | tail -n 1
}
core=$(openblas_core "${torch_env[@]}")
case "$core" in
  SkylakeX | Cooperlake | SapphireRapids | "") ;;
  *) if grep -qw avx512f /proc/cpuinfo; then
       torch_env+=(OPENBLAS_CORETYPE=Cooperlake)
       core="Cooperlake (set by the script: OpenBLAS detected $core on this AVX-512 CPU)"
     fi ;;
esac
