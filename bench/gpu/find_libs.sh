# shellcheck shell=bash
# Sourced by the GPU scripts: NVRTC, cuBLASLt and cuDNN are loaded at run time, so copies the
# loader does not find (the toolkit's, or the ones PyTorch's wheels bring) go on
# LD_LIBRARY_PATH.
find_gpu_libraries() {
  local lib found known
  known=$(ldconfig -p)
  for lib in libnvrtc.so libcublasLt.so libcudnn.so.9; do
    [[ "$known" == *"$lib"* ]] && continue
    found=$(find /usr/local/cuda*/ /usr/lib /opt -name "$lib*" 2>/dev/null | head -1)
    if [ -n "$found" ]; then
      LD_LIBRARY_PATH="$(dirname "$found")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      export LD_LIBRARY_PATH
    fi
  done
}
